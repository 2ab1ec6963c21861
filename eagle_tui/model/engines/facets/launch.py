"""How an engine is started: its entry points, its flag table, the dests the generic code
reads, and its lint rules.

The generic command-line reader, lint, host scan and launcher ask this facet; they never name
an engine. An engine's package fills it in (``engines/<name>/launch.py``).
"""

from __future__ import annotations

from collections.abc import Callable

from eagle_tui.model.launching.checks import LintRule, PlanReader, as_int, no_plan
from eagle_tui.model.launching.flags import FlagTable, ParsedCommand
from eagle_tui.model.launching.remedy import Remedy
from eagle_tui.model.record import Record, record

SERVE = "serve"  # the subcommand a console script starts the server with


@record
class LaunchFacet(Record):
    """Entry points, flag table, parser quirks, dests and rules of one engine."""

    # entry points: what the command-line reader recognises as starting this engine
    modules: tuple[str, ...] = ()  # ``python -m MODULE ARGS``
    module_prefixes: tuple[str, ...] = ()  # ``python -m MODULE... ARGS`` (any module so named)
    serve_modules: tuple[str, ...] = ()  # ``python -m MODULE serve ARGS`` (a script's module)
    scripts: tuple[str, ...] = ()  # console scripts: ``SCRIPT serve ARGS``
    usage: tuple[str, ...] = ()  # the entry points as a user types them, for messages
    process_titles: tuple[str, ...] = ()  # words in the titles its worker processes set
    # the flag table: the stem of its files in ``eagle_tui/data/flags/`` (``STEM-VERSION.json``)
    # or a table given inline; and the parser's quirks the table files do not record
    flag_table: str | FlagTable = ""
    underscores: bool = False  # ``--a_b`` is ``--a-b``
    dotted: bool = False  # ``--a.b v`` sets key ``b`` of the JSON value of ``--a``
    # the dests (argparse's names) and the options as messages name them
    model_dest: str = "model"
    model_positional: bool = False  # the model may be the first positional argument
    model_flag: str = "--model"  # how messages name where the model is given
    port_dest: str = "port"
    port_flag: str = "--port"
    host_dest: str = "host"
    device_dest: str = "device"
    tp_dest: str = "tensor_parallel_size"
    tp_flag: str = "--tensor-parallel-size"
    mem_dest: str | None = None  # the fraction of each GPU's memory the server takes
    mem_flag: str = ""
    mem_default: float | None = None  # ``None``: the engine chooses it itself
    cpu_env: tuple[tuple[str, str], ...] = ()  # ``(NAME, value)``: a CPU build of the engine
    # the speculative plan read the engine's way, and the engine's own lint rules
    read_plan: PlanReader = no_plan
    rules: tuple[LintRule, ...] = ()
    # the edit that makes a running server capture EAGLE-3's aux layers (an alert's fix)
    eagle3_remedy: Remedy | None = None
    # where the server listens when the command does not say (``None``: every interface)
    host_default: str | None = None
    host_flag: str = "--host"
    # the GPUs one node of the server takes (tensor × pipeline × data parallel, the engine's way)
    gpu_count: Callable[[ParsedCommand], int] | None = None
    # its container images (repository names): with the words their entrypoint puts before the
    # command line's (``vllm serve``), or none where the image runs the command given
    images: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def gpus_needed(self, cmd: ParsedCommand) -> int:
        """The GPUs the command needs on its node (the tensor-parallel size by default)."""
        if self.gpu_count is not None:
            return max(1, self.gpu_count(cmd))
        return max(1, as_int(cmd.get(self.tp_dest)) or 1)

    def examples(self) -> tuple[str, ...]:
        """The entry points for messages (``usage``, else made from the modules and scripts)."""
        return self.usage or (*(f"python -m {m}" for m in self.modules),
                              *(f"{s} {SERVE}" for s in self.scripts))


__all__ = ["SERVE", "LaunchFacet"]
