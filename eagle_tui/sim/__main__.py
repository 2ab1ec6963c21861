"""``python -m eagle_tui.sim``: run one simulated speculative-decoding server.

Prints one JSON line (pid, port, log path, work dir, fake nvidia-smi bin dir) once started, then
plays the scenario; the exit status is the engine's (SGLang OOM: killed, shell 137).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .runtime import DEFAULT_PORTS, SimOptions, run
from .scenario import ENGINE_VERSIONS, SCENARIOS


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m eagle_tui.sim",
        description="A simulated SGLang/vLLM server with speculative decoding: real log format, "
        "HTTP on 127.0.0.1, fake nvidia-smi. Scenarios: "
        + "; ".join(f"{s.name}: {s.summary}" for s in SCENARIOS.values()),
    )
    p.add_argument("--engine", choices=("sglang", "vllm"), default="sglang")
    p.add_argument("--scenario", choices=tuple(SCENARIOS), default="healthy")
    p.add_argument("--port", type=int, default=None,
                   help="HTTP port on 127.0.0.1 (default: the engine's, 30000 SGLang / 8000 "
                   "vLLM; 0: any free port)")
    p.add_argument("--log", type=Path, default=None,
                   help="log file to write (default: server.log in the work dir)")
    p.add_argument("--gpus", type=int, default=8, help="simulated GPUs = TP ranks (default 8)")
    p.add_argument("--speed", type=float, default=1.0,
                   help="time compression of the startup (serving always runs in real time)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workdir", type=Path, default=None,
                   help="where the draft config, GPU state and fake nvidia-smi go (default: a "
                   "temporary directory removed at exit)")
    p.add_argument("--exit-with-parent", action="store_true",
                   help="shut down when the process that started this one goes away")
    p.add_argument("--engine-version", default="",
                   help="print this release's wording: "
                   + "; ".join(f"{e}: {', '.join(v)}" for e, v in ENGINE_VERSIONS.items())
                   + " (default: the installed release's, the first)")
    p.add_argument("--stats-interval", type=float, default=2.0,
                   help="vLLM stats line interval in seconds (VLLM_LOG_STATS_INTERVAL)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.stats_interval <= 0:
        print("error: --stats-interval must be positive", file=sys.stderr)
        return 2
    try:
        port = args.port if args.port is not None else DEFAULT_PORTS[args.engine]
        return run(SimOptions(args.engine, args.scenario, port, args.log, args.gpus,
                              args.speed, args.seed, args.workdir, args.stats_interval,
                              args.exit_with_parent, engine_version=args.engine_version))
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
