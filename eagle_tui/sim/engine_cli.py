"""The simulator behind the engines' own command lines (``python -m sglang.launch_server ...``).

So that the demo can show the whole loop — launch with a flag mistake, see acceptance collapse,
press ``E``, fix ``EAGLE`` → ``EAGLE3``, relaunch — the simulated server must take exactly the
command a user types and behave as its flags and the draft's ``config.json`` dictate, the way
the real engine does.

More in docs/architecture.md, "Module notes", ``sim/engine_cli``.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from eagle_tui.files import read_text
from eagle_tui.model.boundary.loaders import load_json
from eagle_tui.model.launching.cmdline import ParsedCommand, parse_args
from eagle_tui.model.launching.lint import is_eagle3_config, spec_plan
from eagle_tui.probe.tables import load_table

from .runtime import SimOptions, run

ENGINES_DIR = Path(__file__).resolve().parent / "engines"
PROGS = {"sglang": "launch_server.py", "vllm": "vllm serve"}


def _draft_is_eagle3(path: str | None) -> bool | None:
    if not path:
        return None
    cfg = Path(path) / "config.json" if not path.endswith(".json") else Path(path)
    try:
        data = load_json(read_text(cfg), f"draft config.json at {cfg}")
    except (OSError, ValueError):
        return None
    return is_eagle3_config(data) if isinstance(data, dict) else None


def scenario_for(cmd: ParsedCommand, draft_eagle3: bool | None) -> str:
    """The simulated story the flags and the draft dictate (``EAGLE_TUI_SIM_SCENARIO`` wins)."""
    forced = os.environ.get("EAGLE_TUI_SIM_SCENARIO")
    if forced:
        return forced
    algo = spec_plan(cmd).algorithm
    if algo in ("EAGLE", "NEXTN", "eagle") and draft_eagle3:
        return "misconfigured"
    return "healthy"


def _int(value: object, default: int) -> int:
    return int(value) if isinstance(value, str) and value.isdigit() and len(value) < 7 \
        else default


def options(engine: str, argv: Sequence[str]) -> tuple[SimOptions | None, str]:
    """The simulator's options for an engine command (``None`` and the engine's error)."""
    table = load_table("sglang" if engine == "sglang" else "vllm")
    given, positionals, problems = parse_args(list(argv), table)
    cmd = ParsedCommand(table.engine, PROGS[table.engine], (), (), tuple(argv), tuple(given),
                        tuple(positionals), tuple(problems), table.version)
    fatal = [p for p in problems if p.kind != "cut"]
    if fatal:
        return None, f"{PROGS[table.engine]}: error: {fatal[0].message}"
    plan = spec_plan(cmd)
    draft = plan.draft
    if draft and not Path(draft).exists():
        return None, (f"OSError: {draft} does not appear to have a file named config.json")
    port = _int(cmd.get("port"), 30000 if engine == "sglang" else 8000)
    tp = _int(cmd.get("tp_size" if engine == "sglang" else "tensor_parallel_size"), 1)
    speed = float(os.environ.get("EAGLE_TUI_SIM_SPEED", "8") or 8)
    workdir = os.environ.get("EAGLE_TUI_SIM_WORKDIR")
    return SimOptions(
        engine=table.engine, scenario=scenario_for(cmd, _draft_is_eagle3(draft)), port=port,
        log_path=Path("/dev/stdout"), gpus=max(1, min(tp, 64)), speed=speed,
        workdir=Path(workdir) if workdir else None,
        draft_path=Path(draft) if draft else None, log_append=True, announce=False,
        model_path=_model(cmd)), ""


def _model(cmd: ParsedCommand) -> str | None:
    value = cmd.get("model_path") if cmd.engine == "sglang" else (
        cmd.positionals[0] if cmd.positionals else cmd.get("model"))
    return value if isinstance(value, str) else None


PKG = "/usr/local/lib/python3.12/dist-packages"


def vllm_refusal(opts: SimOptions, argv: Sequence[str]) -> list[str]:
    """What the real vLLM 0.32 prints for ``"method": "eagle"`` with an EAGLE-3 draft: it
    refuses at startup (``tests/fixtures/vllm-cpu/server-eagle-method-with-eagle3-draft.log``,
    the frames shortened): it looks for an EAGLE-1 model of the draft, ``Eagle`` + its
    architecture, and there is none."""
    from .textfmt import vllm_time

    arch = "LlamaForCausalLMEagle3"
    if opts.draft_path is not None:
        with contextlib.suppress(OSError, ValueError, IndexError, TypeError):
            cfg = opts.draft_path / "config.json"
            data = load_json(read_text(cfg), f"draft config.json at {cfg}")
            arch = str(data["architectures"][0])
    head = f"(APIServer pid={os.getpid()}) INFO {vllm_time(time.time())}"
    return [
        f"{head} [api_utils.py:347]   version 0.32.0",
        f"{head} [api_utils.py:286] non-default args: {{'model_tag': {opts.model_path!r}, "
        f"'port': {opts.port}, 'speculative_config': {_spec_arg(argv)}}}",
        f"{head} [model.py:733] Resolved architecture: LlamaForCausalLM",
        f"{head} [model.py:733] Resolved architecture: {arch}",
        "Traceback (most recent call last):",
        f'  File "{PKG}/vllm/engine/arg_utils.py", line 2099, in create_speculative_config',
        "    return SpeculativeConfig(**self.speculative_config)",
        f'  File "{PKG}/pydantic/_internal/_dataclasses.py", line 121, in __init__',
        "    s.__pydantic_validator__.validate_python(ArgsKwargs(args, kwargs), self_instance=s)",
        "pydantic_core._pydantic_core.ValidationError: 1 validation error for SpeculativeConfig",
        f"  Value error, Model architectures ['Eagle{arch}'] are not supported for now. "
        "Supported architectures: dict_keys(['LlamaForCausalLM', 'EagleLlamaForCausalLM', "
        "'Eagle3LlamaForCausalLM', 'LlamaForCausalLMEagle3']) [type=value_error, "
        "input_value=ArgsKwargs((), {'method': 'eagle', ...}), input_type=ArgsKwargs]",
        "    For further information visit https://errors.pydantic.dev/2.14/v/value_error",
    ]


def _spec_arg(argv: Sequence[str]) -> str:
    for i, word in enumerate(argv):
        if word.startswith("--speculative-config="):
            return word.split("=", 1)[1]
        if word == "--speculative-config" and i + 1 < len(argv):
            return argv[i + 1]
    return "{}"


def main(engine: str, argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    opts, error = options(engine, words)
    if opts is None:
        print(error, file=sys.stderr, flush=True)
        return 2 if ": error: " in error else 1
    if opts.engine == "vllm" and opts.scenario == "misconfigured" and not os.environ.get(
            "EAGLE_TUI_SIM_SCENARIO"):
        print("\n".join(vllm_refusal(opts, words)), flush=True)  # what a real vLLM prints
        return 1
    try:
        return run(opts)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # ``python -m eagle_tui.sim.engine_cli vllm serve ...``
    args = sys.argv[1:]
    name = args[0] if args else "sglang"
    rest = args[1:]
    if name == "vllm" and rest[:1] == ["serve"]:
        rest = rest[1:]
    raise SystemExit(main(name, rest))
