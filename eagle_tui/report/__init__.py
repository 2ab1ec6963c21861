"""The report engine: what a finished (or running) server log says, in one pass and constant
memory; the engine of ``eagle-tui report``.

It folds the pure model's events (``eagle_tui.model``: parser, reducer, alerts) into a report,
and does the I/O that the model may not: it reads files (:mod:`.reader`), spools number arrays
to temporary files (:mod:`.spool`) and forks worker processes for a big file
(:mod:`.parallel`), whose results are :mod:`.chunk_summary`\\ s.

    report = build_report_parallel(f, name)     # or build_report(stream, name): serial
    try:
        write_json(report, out)                 # or out.write(render_text(report))
    finally:
        close(report)

More in docs/architecture.md, "Module notes", ``report/__init__``.
"""

from __future__ import annotations

from .builder import ReportBuilder, build_report
from .output import close, render_text, to_plain, write_json
from .parallel import build_report_parallel
from .spool import NumberSpool

__all__ = ["NumberSpool", "ReportBuilder", "build_report", "build_report_parallel", "close",
           "render_text", "to_plain", "write_json"]
