"""What the demo runs as if it were a real launch: the engine's command line a user would type,
and the stand-in programs first on ``PATH`` that answer it with the simulator.

The simulator plays its own engines (:data:`ENGINES`), whatever engines the registry knows.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from eagle_tui.sim.runtime import DEFAULT_PORTS

ENGINES: tuple[str, ...] = tuple(DEFAULT_PORTS)  # the first is the demo's default

_VLLM_SCRIPT = """#!{python}
import sys
from eagle_tui.sim.engine_cli import main
args = sys.argv[1:]
if args[:1] == ["serve"]:
    args = args[1:]
raise SystemExit(main("vllm", args))
"""


def demo_command(engine: str, scenario: str, draft: str, port: int, gpus: int) -> list[str]:
    """The command a user would type for the scenario: ``misconfigured`` is the EAGLE /
    ``"method": "eagle"`` mistake with the EAGLE-3 draft, every other one EAGLE3."""
    wrong = scenario == "misconfigured"
    if engine == "vllm":
        method = "eagle" if wrong else "eagle3"
        config = json.dumps({"method": method, "model": draft, "num_speculative_tokens": 3})
        return ["vllm", "serve", "meta-llama/Llama-3.3-70B-Instruct", "--speculative-config",
                config, "--tensor-parallel-size", str(gpus), "--port", str(port)]
    return ["python", "-m", "sglang.launch_server", "--model-path",
            "meta-llama/Llama-3.3-70B-Instruct", "--speculative-algorithm",
            "EAGLE" if wrong else "EAGLE3", "--speculative-draft-model-path", draft,
            "--tp-size", str(gpus), "--port", str(port)]


def write_stand_ins(bin_dir: Path) -> None:
    """``python`` (this interpreter) and ``vllm`` (the simulator's vLLM) in ``bin_dir``."""
    # a script, not a link: a venv's interpreter finds its site-packages from the path it was
    # started by, and a link elsewhere would start it without them
    for name, text in (("python", f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n'),
                       ("vllm", _VLLM_SCRIPT.format(python=sys.executable))):
        script = bin_dir / name
        script.write_text(text, encoding="utf-8")
        script.chmod(0o755)


__all__ = ["ENGINES", "demo_command", "write_stand_ins"]
