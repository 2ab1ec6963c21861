"""``report`` forks its workers before the fold's imports: the modules a worker runs, and what the
``report`` command loads before it forks them, import nothing of the parser, the events, the state
or the reducer (those follow the fork, in the parent only)."""

from __future__ import annotations

import json

from tests.support.probe import run_probe

PROBE = """
import json, sys
from eagle_tui.cli import build_parser
build_parser("report")
from eagle_tui.commands.container_log import fetched_log, one_log
import eagle_tui.files, eagle_tui.model.ingest.normalize, eagle_tui.model.ingest.textenc
from eagle_tui.report.parallel import build_report_parallel, summarize_at
before = sorted(sys.modules)
from eagle_tui.report import build_report, write_json
print(json.dumps({"before": before, "after": sorted(sys.modules)}))
"""
FOLD = ("eagle_tui.report.builder", "eagle_tui.model.ingest.parser", "eagle_tui.model.events",
        "eagle_tui.model.state", "eagle_tui.model.fold.reducer",
        "eagle_tui.commands.report_windows", "eagle_tui.assembly.spec")


def test_the_workers_fork_before_the_folds_imports() -> None:
    loaded = json.loads(run_probe(PROBE))
    assert [m for m in FOLD if m in loaded["before"]] == []
    # the package's names still load on first use
    assert {"eagle_tui.report.builder", "eagle_tui.report.output"} <= set(loaded["after"])
