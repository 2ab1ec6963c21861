"""End to end: deep JSON where each command meets it, scanners linear in their input, and a
log parser that keeps going after a line it cannot read.

What broke: a deep ``--speculative-config`` in ``lint`` (exit 70); deep JSON in a log line (a dead
log source: a later crash never reported); a record file whose first line is deep (``replay
--headless`` never ended); ``report`` with thousands of distinct hidden-state dims (12 s for
1,000); a 100,000-frame traceback that ``wait --timeout 3`` missed. Growth checks compare CPU
time at n and 8n (a ratio), or the wall time against the command's own timeout.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from eagle_tui.cli import main
from eagle_tui.model.engines.vllm import logs as vllm
from eagle_tui.model.events import CrashEvent, SourceFailed
from eagle_tui.model.ingest.crash import CrashTracker
from eagle_tui.model.ingest.framing import LineFramer
from eagle_tui.model.ingest.logfeed import LogFeed
from eagle_tui.model.ingest.parser import PARSER_SOURCE, LogParser
from eagle_tui.report.chunk_summary import new_dims

DEEP = '{"method": "eagle3", "x": ' + '{"a": ' * 5000 + "1" + "}" * 5000 + "}"
HEAD = "INFO 01-01 10:00:00 [api_server.py:1] vLLM API server version 0.9.0\n"
ARGS = "INFO 01-01 10:00:01 [api_server.py:2] args: --speculative-config '{}'\n"
TRACEBACK = ('Traceback (most recent call last):\n  File "/x/y.py", line 1, in f\n    g()\n'
             "RuntimeError: CUDA error: an illegal memory access was encountered\n")


def _cpu(fn: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(3):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return max(best, 1e-4)


# ------------------------------------------------------------------------------ end to end

def test_lint_with_a_deep_speculative_config_is_one_clear_error(
        capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["lint", "--", "vllm", "serve", "m", "--speculative-config", DEEP])
    out = capsys.readouterr().out
    assert code == 1
    assert "argument --speculative-config: nested deeper than 64 levels" in out


def test_report_on_a_log_line_with_deep_json(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "server.log"
    log.write_text(HEAD + ARGS.replace("{}", DEEP) + TRACEBACK)
    assert main(["report", "--json", str(log)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["crash"] is not None


def test_a_deep_json_log_line_then_a_crash_wait_says_crashed(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(HEAD + ARGS.replace("{}", DEEP) + TRACEBACK)
    assert main(["wait", "--log", str(log), "--gpu", "none", "--timeout", "20"]) == 1


def test_a_line_the_parser_cannot_read_is_reported_and_the_log_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(msg: str) -> dict[str, object]:
        raise RuntimeError("a parser bug")

    monkeypatch.setattr(vllm, "spec_from_text", broken)
    parser = LogParser()
    events = [ev for line in (HEAD + ARGS + TRACEBACK).splitlines()
              for ev in parser.feed_line(line)]
    failed = [ev for ev in events if isinstance(ev, SourceFailed)]
    assert len(failed) == 1 and failed[0].source == PARSER_SOURCE
    assert "line 2 not parsed (RuntimeError: a parser bug)" in failed[0].error
    assert any(isinstance(ev, CrashEvent) for ev in events)  # the later crash is still found
    log = tmp_path / "server.log"
    log.write_text(HEAD + ARGS + TRACEBACK)
    assert main(["wait", "--log", str(log), "--gpu", "none", "--timeout", "20"]) == 1


def test_replay_of_a_record_whose_first_line_is_deep_ends(tmp_path: Path) -> None:
    rec = tmp_path / "run.jsonl"
    rec.write_text('{"type": ' + "[" * 5000 + "]" * 5000 + "}\n" + TRACEBACK)
    assert main(["replay", "--headless", str(rec)]) in (0, 1)


def test_a_record_line_without_end_is_refused_and_replay_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from eagle_tui.sources import replay as replay_mod
    from eagle_tui.sources.replay import ReplayError, ReplaySource

    monkeypatch.setattr(replay_mod, "MAX_RECORD_BYTES", 1000)
    rec = tmp_path / "run.jsonl"
    good = '{"type": "Tick", "t": 1.0}\n'
    rec.write_text(good + '{"type": "Tick", "t": ' + "1" * 5000 + "}\n" + good)
    src = ReplaySource(rec, kind="record")

    async def drain() -> list[object]:
        out: list[object] = []
        for _ in range(3):  # the session retries a failed source: it goes on after the line
            try:
                async for ev in src.events():
                    out.append(ev)
                return out
            except ReplayError as exc:
                out.append(exc)
        return out

    got = asyncio.run(drain())
    assert len(got) == 3 and "longer than" in str(got[1])


# ------------------------------------------------------------------------ linear scanners

def test_new_dims_is_linear_in_distinct_dims() -> None:
    def run_of(k: int) -> Callable[[], object]:
        buf = b"".join(b"[EAGLE3-DEBUG] hidden_states shape=torch.Size([1, %d])\n" % (1000 + i)
                       for i in range(k)) * 2
        return lambda: new_dims(buf, 0, len(buf))
    small, big = _cpu(run_of(300)), _cpu(run_of(2400))
    assert big / small < 20, (small, big)


def test_report_is_linear_in_distinct_dims(tmp_path: Path) -> None:
    """The whole fold, state included (each new dim once cost O(dims) in the reducer)."""
    from eagle_tui.report.builder import build_report

    def log_of(k: int) -> Callable[[], object]:
        path = tmp_path / f"dims-{k}.log"
        path.write_bytes(HEAD.encode() + b"".join(
            b"[EAGLE3-DEBUG] hidden_states shape=torch.Size([1, %d])\n" % (1000 + i)
            for i in range(k)) * 3)

        def go() -> object:
            with path.open("rb") as f:
                return build_report(f, str(path))
        return go
    report = log_of(300)()
    assert len(report["hidden_state_dims"]) == 32  # type: ignore[index]
    small, big = _cpu(log_of(1_000)), _cpu(log_of(8_000))
    assert big / small < 20, (small, big)


def test_new_dims_finds_each_dim_once_in_order() -> None:
    lines = [b"hidden_states shape=torch.Size([1, %d])" % d for d in (7, 9, 7, 11, 9, 13)]
    buf = b"\n".join(lines + [b"tensor([1, 2]) ])"] * 3 + lines[::-1]) + b"\n"
    assert new_dims(buf, 0, len(buf)) == [(7, 0), (9, 1), (11, 3), (13, 5)]
    assert new_dims(buf, 0, len(buf), (7, 9)) == [(11, 3), (13, 5)]


def _traceback_log(frames: int) -> bytes:
    body = "".join(f'  File "/x/y{i}.py", line {i}, in f\n    g()\n' for i in range(frames))
    return ("Traceback (most recent call last):\n" + body + "RuntimeError: boom\n").encode()


def test_traceback_parsing_is_linear_in_frames() -> None:
    def feed(frames: int) -> Callable[[], object]:
        data = _traceback_log(frames)

        def go() -> object:
            f = LogFeed(LogParser(), LineFramer(0, tail_lines=1000))
            return [*f.feed(data), *f.finish()]
        return go
    small, big = _cpu(feed(2_000)), _cpu(feed(16_000))
    assert big / small < 20, (small, big)


def test_a_traceback_whose_head_is_not_in_view_still_crashes() -> None:
    tracker = CrashTracker()
    out = [ev for i, line in enumerate(['  File "/x/y.py", line 3, in f', "    g()",
                                        "RuntimeError: boom"], 1) for ev in tracker.feed(line, i)]
    assert [ev.kind for ev in out] == ["other_traceback"]


def test_wait_sees_the_crash_after_a_100k_frame_traceback_within_its_timeout(
        tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(_traceback_log(100_000))
    timeout = 3.0
    t0 = time.monotonic()
    assert main(["wait", "--log", str(log), "--gpu", "none", "--timeout", f"{timeout:g}"]) == 1
    assert time.monotonic() - t0 < 2 * timeout + 2  # the timeout, plus start and the answer
