"""The report engine: what a finished (or running) server log says, in one pass and constant
memory; the engine of ``eagle-tui report``.

It folds the pure model's events (``eagle_tui.model``) into a report, and does the I/O that the
model may not: it reads files (:mod:`.reader`), spools number arrays to temporary files
(:mod:`.spool`), forks workers for a big file (:mod:`.parallel`: :mod:`.chunk_summary`\\ s).

    report = build_report_parallel(f, name)     # or build_report(stream, name): serial
    try:
        write_json(report, out)                 # or out.write(render_text(report))
    finally:
        close(report)

Names load on first use (workers fork before the fold's imports); docs/architecture.md, "Module
notes", ``report/__init__``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .builder import ReportBuilder, build_report
    from .output import close, render_text, to_plain, write_json
    from .parallel import build_report_parallel
    from .spool import NumberSpool

_HOME = {"NumberSpool": "spool", "ReportBuilder": "builder", "build_report": "builder",
         "build_report_parallel": "parallel", "close": "output", "render_text": "output",
         "to_plain": "output", "write_json": "output"}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)


__all__ = ["NumberSpool", "ReportBuilder", "build_report", "build_report_parallel", "close",
           "render_text", "to_plain", "write_json"]
