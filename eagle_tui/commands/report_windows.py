"""Benchmark windows for ``eagle-tui report``: bench's markers in the log, and results files.

The report engine reads a log once, in parallel chunks and constant memory; windows need the
stats lines *in order* around each marker, so they are a second, sequential pass here, made
only when the log holds a bench marker or ``--bench-results`` was given. The report's own pass
tells where the first marker is (``ReportBuilder.bench_mark``: one ``find`` per chunk), so a
log without markers is read once; :func:`first_marker` scans a file for callers without a
report. The second pass reads from the first marker on (results files: from the start, since
their windows are placed by time).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from eagle_tui.errors import InputError
from eagle_tui.files import NotRegularFileError, open_regular, read_text
from eagle_tui.model.bench.benchfiles import ResultsRun, parse_results, span_figures
from eagle_tui.model.bench.windows import BENCH_TAG, WindowTracker, last_interval
from eagle_tui.model.events import Event

SCAN_CHUNK = 1 << 20
# A results file is read whole and parsed as JSON (~16 bytes of memory a byte): per-request
# details of a few thousand requests are a few MB
RESULTS_LIMIT = 32 << 20
_MARK = f"{BENCH_TAG}=".encode()


def first_marker(path: Path) -> int | None:
    """Byte offset of the line holding the first bench marker, or None.

    Read 1 MiB at a time into one reused buffer (a memory map would count the whole file in
    the process's RSS): memory stays one buffer whatever the log's size.
    """
    keep = len(_MARK) + 4096  # a marker (and its line's start) across two reads
    buf = bytearray(SCAN_CHUNK + keep)
    held = 0  # bytes kept from the previous read at the start of ``buf``
    pos = 0  # file offset of buf[0]
    with open_regular(path) as fh:
        while True:
            with memoryview(buf) as view:
                n = fh.readinto(view[held:held + SCAN_CHUNK])
            if not n:
                return None
            end = held + n
            i = buf.find(_MARK, 0, end)
            if i >= 0:
                return pos + buf.rfind(b"\n", 0, i) + 1
            cut = max(0, end - keep)
            buf[:end - cut] = buf[cut:end]
            pos += cut
            held = end - cut


def interval_before(path: Path, end: int) -> tuple[int, str] | None:
    """The last decode-log interval the log states before byte ``end`` (its ``server_args``
    line, or the launch command echoed into it): the window pass starts at the first marker,
    past the line that says it. Read 1 MiB at a time, a line cut by a read kept for the next."""
    found: tuple[int, str] | None = None
    tail = b""
    with open_regular(path) as fh:
        left = end
        while left > 0:
            data = fh.read(min(SCAN_CHUNK, left))
            if not data:
                break
            left -= len(data)
            buf = tail + data
            cut = buf.rfind(b"\n") + 1 if left > 0 else len(buf)
            tail = buf[cut:][-SCAN_CHUNK:]  # (a line longer than a read: its end)
            found = last_interval(buf[:cut].decode("utf-8", "replace")) or found
    return found


def load_results(files: list[str]) -> list[ResultsRun]:
    """Every run of every results file; ValueError names the file that is not one."""
    runs: list[ResultsRun] = []
    for name in files:
        try:
            text = read_text(name, errors="replace", limit=RESULTS_LIMIT)
        except NotRegularFileError as exc:
            raise ValueError(f"--bench-results {exc}") from None
        except OSError as exc:
            raise ValueError(f"--bench-results {name}: {exc.strerror or exc}") from None
        except InputError as exc:
            raise ValueError(f"--bench-results {exc}") from None
        try:
            runs.extend(parse_results(text))
        except ValueError as exc:
            raise ValueError(f"--bench-results {name}: {exc}") from None
    return runs


def _events(path: Path, offset: int) -> list[Event]:
    from eagle_tui.model.ingest.parser import LogParser

    parser = LogParser()
    out: list[Event] = []
    with open_regular(path) as fh:
        fh.seek(offset)
        for raw in fh:
            out.extend(parser.feed_line(raw.rstrip(b"\r\n")))
    out.extend(parser.finish())
    return out


def windows(path: Path | None, runs: list[ResultsRun], marker: int | None = None, *,
            scanned: bool = False) -> list[dict[str, Any]]:
    """The log's bench windows, then one window per results run (the log's figures over its
    time span beside the file's). ``scanned``: ``marker`` is already known (the offset of the
    first marker's line, or None: the log has none), else the file is scanned for it."""
    out: list[dict[str, Any]] = []
    if not scanned:
        marker = first_marker(path) if path is not None else None
    if path is None or (marker is None and not runs):
        return [_run_dict(r, None) for r in runs]
    events = _events(path, 0 if runs else marker or 0)
    if marker is not None:
        tracker = WindowTracker()
        if not runs and marker and (interval := interval_before(path, marker)) is not None:
            tracker.set_interval(*interval)
        tracker.feed(events)
        out.extend(w.as_dict() for w in tracker.windows)
    for run, log in zip(runs, span_figures(events, runs), strict=True):
        out.append(_run_dict(run, log))
    return out


def _run_dict(run: ResultsRun, log: Any) -> dict[str, Any]:
    d = run.as_dict()
    d["id"] = f"{run.tool}{' ' + run.label if run.label else ''}"
    d["duration_s"] = (run.t_end - run.t_start if run.t_end is not None and run.t_start is not None
                       else None)
    if log is not None:
        d["figures"] = [log.as_dict(), *d["figures"]]
    return d


def render(wins: list[dict[str, Any]]) -> str:
    """The report's text section: each window's sources side by side."""
    from eagle_tui.commands.bench_window import format_window

    if not wins:
        return ""
    lines = ["benchmark windows:"]
    for w in wins:
        lines += format_window(w)
    return "\n".join(lines) + "\n"


__all__ = ["first_marker", "load_results", "render", "windows"]
