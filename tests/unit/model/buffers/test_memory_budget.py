"""Memory is bounded in bytes at every buffer, whatever the log holds (issue 17, item 2).

``watch --log /dev/zero`` once reached 4 GB in 12 s, a 2 GB sparse file 6.3 GB, ``report
/dev/zero`` 2 GB and growing: buffers were bounded in lines, and a file without newlines is one
endless line. Each test here feeds a large NUL-filled, newline-less stream through one real path
in a fresh subprocess and checks that its peak RSS (``ru_maxrss``) after the whole stream is
within a small margin of its peak after the first part: memory does not grow with the input.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from eagle_tui.model.buffers.logbuffer import LogBuffer
from eagle_tui.model.events import LogLine
from eagle_tui.model.ingest.framing import LineFramer
from tests.support.paths import REPO

MB = 1 << 20
TOTAL_MB = 160  # NUL bytes fed in all; the RSS is compared after WARM_MB and at the end
WARM_MB = 32
GROWTH_MB = 40  # allowed growth of the peak RSS between the two (a leak of 1 line/MB would be 128)

_PRELUDE = """
import os, resource, sys
sys.path.insert(0, {root!r})
def rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
"""


def _run(body: str, *args: str) -> list[float]:
    """Run ``body`` in a fresh interpreter; it prints RSS figures, one per line."""
    code = _PRELUDE.format(root=str(REPO)) + textwrap.dedent(body)
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                         timeout=240, check=True)
    return [float(x) for x in out.stdout.split()]


def test_live_path_of_a_newline_less_stream_stays_bounded() -> None:
    """Framer → parser → log buffer, as the dashboard feeds them (64 KiB reads)."""
    warm, end = _run(f"""
        from eagle_tui.model.ingest.logfeed import LogFeed
        from eagle_tui.model.ingest.parser import LogParser
        from eagle_tui.model.buffers.logbuffer import LogBuffer
        from eagle_tui.model.events import LogLine
        feed = LogFeed(LogParser())
        buf = LogBuffer()
        chunk = bytes(64 << 10)
        for i in range({TOTAL_MB} * 16):
            events = feed.feed(chunk)
            if i == 0:
                events += feed.caught_up()
            buf.append([e for e in events if type(e) is LogLine])
            if i == {WARM_MB} * 16:
                print(rss_mb())
        print(rss_mb())
    """)
    assert end - warm < GROWTH_MB, (warm, end)


def test_report_of_a_sparse_file_stays_bounded(tmp_path: Path) -> None:
    """``report`` on a NUL-filled (sparse) file: its reader cuts lines as the framer does."""
    path = tmp_path / "sparse.log"
    with path.open("wb") as f:
        f.truncate(TOTAL_MB * MB)
    small = tmp_path / "small.log"
    with small.open("wb") as f:
        f.truncate(WARM_MB * MB)
    warm, end = _run("""
        import io
        from eagle_tui.report import build_report
        for name in sys.argv[1:]:
            with open(name, "rb") as f:
                report = build_report(f, name)
            print(rss_mb())
    """, str(small), str(path))
    assert end - warm < GROWTH_MB, (warm, end)


@pytest.mark.parametrize("workers", ["1", "3"])
def test_report_command_of_a_sparse_file_cuts_lines_like_the_framer(tmp_path: Path,
                                                                    workers: str) -> None:
    """The whole command (serial or forked workers): bounded RSS, lines counted as cut."""
    path = tmp_path / "sparse.log"
    with path.open("wb") as f:
        f.truncate(40 * MB + 5)
    env = dict(os.environ, EAGLE_TUI_REPORT_WORKERS=workers)
    out = subprocess.run([sys.executable, "-m", "eagle_tui", "report", "--json", str(path)],
                         capture_output=True, text=True, timeout=240, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    assert '"lines": 41' in out.stdout  # 40 cut lines of 1 MiB and the 5 bytes left


def test_framer_holds_at_most_one_line_of_a_newline_less_stream() -> None:
    framer = LineFramer()
    chunk = bytes(1 << 20)
    cut = 0
    for _ in range(64):
        frames = framer.feed(chunk)
        cut += sum(1 for f in frames if f.cut)
        assert framer.partial <= framer.max_line
        assert framer.held[1] <= framer.tail_bytes + framer.max_line
    frames = framer.caught_up()
    assert cut + sum(1 for f in frames if f.cut) >= 60


def test_log_buffer_is_bounded_in_bytes() -> None:
    buf = LogBuffer(max_lines=10_000, max_bytes=8 * MB)
    line = "\ufffd" * MB
    for i in range(40):
        buf.append([LogLine(i + 1, line)])
    assert buf.line_count <= 9
