"""``report`` with worker processes: byte-identical to the serial report, and no worker left.

The parallel path (``eagle_tui.report.parallel``) cuts the file where the serial reader cuts its
chunks; these tests use the reader's smallest chunk (64 KiB for a file), no size threshold and
several workers, so that small fixture logs are cut in many places: inside tracebacks, in the
startup, in runs of stats lines.
"""

from __future__ import annotations

import io
import json
import marshal
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from eagle_tui.cli import main
from eagle_tui.report import ReportBuilder, build_report, close
from eagle_tui.report import parallel as rp
from eagle_tui.report import write_json as dump
from eagle_tui.report.chunk_summary import PIECE, NumberRun, summarize_chunk
from eagle_tui.report.reader import plan, read_chunks
from tests.support.bench import bench_module
from tests.support.paths import REPO
from tests.support.procs import sigint_as_at_a_terminal

summarize_at = rp.summarize_at  # the real one, for wrappers that tests patch in

ROOT = REPO
FIX = ROOT / "tests" / "fixtures"
LOGS = sorted([*FIX.glob("vllm-cpu/*.log"), *FIX.glob("samples/*.log"),
               ROOT / "eagle_tui" / "data" / "sample-sglang-eagle3.log"])
SMALL = 1 << 16  # the serial reader's smallest chunk for a regular file
STAMP = "[2025-11-20 10:16:03] "


def decode(i: int, acc: str = "2.50") -> str:
    return (f"{STAMP}Decode batch, #running-req: 4, #token: {i}, token usage: 0.01, accept len:"
            f" {acc}, accept rate: 0.62, cuda graph: True, gen throughput (token/s): "
            f"{300 + i % 97}.{i % 10}0, #queue-req: 0, \n")


def debug(dim: int = 21504) -> str:
    return f"[EAGLE3-DEBUG] hidden_states shape=torch.Size([16, {dim}])\n"


def as_json(r: dict[str, Any]) -> bytes:
    out = io.BytesIO()
    try:
        dump(r, out)
    finally:
        close(r)
    return out.getvalue()


def serial(path: Path) -> bytes:
    with path.open("rb") as f:
        return as_json(build_report(f, path.name, chunk=SMALL))


def parallel(path: Path, workers: int = 4, rss: list[tuple[int, int]] | None = None) -> bytes:
    with path.open("rb") as f:
        return as_json(rp.build_report_parallel(f, path.name, workers=workers, threshold=0,
                                                min_bytes=1, chunk=SMALL, rss=rss))


def check(path: Path, workers: int = 4) -> bytes:
    """The parallel JSON, asserted byte-identical to the serial one (and really parallel)."""
    layout = plan(os.open(path, os.O_RDONLY), path.stat().st_size, SMALL)
    assert layout is not None and len(layout[0]) >= 2, "the file must span several chunks"
    expected = serial(path)
    rss: list[tuple[int, int]] = []
    assert parallel(path, workers, rss) == expected
    assert len(rss) == min(workers, len(layout[0])) - 1  # the workers did run
    return expected


def repeat_to(data: bytes, size: int) -> bytes:
    return data * (size // max(len(data), 1) + 1)


@pytest.fixture(autouse=True)
def _no_children_left() -> Any:
    """No process that the test started is left (others' may run: the suite shares a process)."""
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    yield
    assert [p for p in psutil.Process().children(recursive=True) if p.pid not in before] == []


# ------------------------------------------------------------------------------ the plan
@pytest.mark.parametrize("seed", range(6))
def test_plan_is_the_serial_readers_chunking(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    lines = [b"x" * rng.choice([0, 5, 80, 400, 3000, 20_000]) for _ in range(rng.randint(1, 900))]
    data = b"\n".join(lines) + rng.choice([b"", b"\n", b"tail without newline"])
    path = tmp_path / "x.log"
    path.write_bytes(data)
    with path.open("rb") as f:
        cuts: list[tuple[bytes, bool]] = [(bytes(b[1:e]), last) for b, e, last in
                                          read_chunks(f, SMALL)]
    layout = plan(os.open(path, os.O_RDONLY), len(data), SMALL)
    assert layout is not None
    chunks, rest = layout
    planned = [(data[o : o + n], False) for o, n in chunks]
    assert cuts[: len(planned)] == planned
    with path.open("rb") as f:
        f.seek(rest)
        assert [(bytes(b[1:e]), last) for b, e, last in read_chunks(f, SMALL)] == \
            cuts[len(planned) :]


def test_plan_refuses_a_line_longer_than_the_buffer(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    path.write_bytes(b"a\n" + b"y" * (3 * SMALL) + b"\n" + b"z\n" * SMALL)
    assert plan(os.open(path, os.O_RDONLY), path.stat().st_size, SMALL) is None
    parallel(path)  # and the report still runs (serially)


# ------------------------------------------------------------------------------ identical JSON
@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name)
@pytest.mark.parametrize("shift", [0, 333])
def test_every_fixture_repeated_is_identical(tmp_path: Path, log: Path, shift: int) -> None:
    # the shift moves every chunk boundary to another place in the repeated log
    data = b"x" * shift + b"\n" + repeat_to(log.read_bytes(), 5 * SMALL)
    path = tmp_path / log.name
    path.write_bytes(data)
    check(path)


def test_all_fixtures_concatenated_with_many_workers(tmp_path: Path) -> None:
    data = b"".join(p.read_bytes().rstrip(b"\n") + b"\n" for p in LOGS)
    path = tmp_path / "all.log"
    path.write_bytes(repeat_to(data, 12 * SMALL))
    for workers in (2, 3, 8):
        check(path, workers)


def test_last_line_without_newline(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    body = "".join(decode(i) + debug() for i in range(2000))
    path.write_bytes((body + decode(7).rstrip("\n")).encode())
    r = check(path)
    assert b'"lines": 4001' in r


def test_traceback_across_a_chunk_boundary(tmp_path: Path) -> None:
    """A crash whose traceback starts in one chunk and ends in the next (another process's)."""
    crash = (FIX / "samples" / "sglang-oom-cuda-graph.log").read_bytes()
    body = "".join(decode(i) + debug() for i in range(600)).encode()
    tail = "".join(decode(i) for i in range(800)).encode()
    path = tmp_path / "x.log"
    for pad in range(0, 2 * SMALL, 211):  # shift the crash until a boundary is in its traceback
        data = body + b"y" * pad + b"\n" + crash + tail
        start = data.index(b"Traceback")
        end = data.index(b"\n", data.index(b"Error", start)) + 1
        path.write_bytes(data)
        layout = plan(os.open(path, os.O_RDONLY), len(data), SMALL)
        assert layout is not None
        if any(start < o < end for o, _ in layout[0]):
            break
    else:
        pytest.fail("no boundary inside the traceback")
    r = check(path)
    assert b'"crash": {"kind": "cuda_oom"' in r


def test_engine_and_serving_decided_late(tmp_path: Path) -> None:
    """Chunks whose summary's assumption fails (engine unknown, "serving" not seen yet) are
    re-read and fed serially; new dims, odd tokens and quoted stats in worker chunks."""
    rng = random.Random(3)
    out = [debug() for _ in range(3000)]  # no engine for two chunks and more
    out.append(f"{STAMP}Prefill batch, #new-seq: 1, #new-token: 5, #cached-token: 0, token "
               "usage: 0.01, #running-req: 1, #queue-req: 0, \n")  # the engine, not serving
    out += [debug(4096) for _ in range(3000)]
    for i in range(6000):
        r = rng.random()
        acc = rng.choice(["2.50", "2.170", "3", "1.2.3", "07.5"]) if r < 0.01 else "2.50"
        out.append(decode(i, acc))
        out.append(debug(rng.choice([21504, 21504, 21504, 8192 + i % 3])) if r < 0.5 else
                   "[EAGLE3-DEBUG] quoted: gen throughput (token/s): 12.30, accept len: 1.50\n")
        if r > 0.999:
            out.append("\x1b[31mWARNING\x1b[0m odd line\r\n")
    path = tmp_path / "x.log"
    path.write_text("".join(out))
    got = check(path, 3)
    assert b'"phase": "serving"' in got and b"8194" in got


def test_parser_serving_decided_late_with_a_traceback_open(tmp_path: Path) -> None:
    """A fragment's prefill batches make the state serving chunks before the first Decode line
    moves the parser's own phase there; a traceback is open meanwhile, and its exception line
    ("0") is fatal only while the parser is not serving: a worker's chunk holding that first
    Decode line is re-read, so serial, parallel and line by line agree (no crash)."""
    prefill = (f"{STAMP}Prefill batch, #new-seq: 1, #new-token: 5, #cached-token: 0, "
               "#running-req: 1, #queue-req: 0, \n")
    out = ["Traceback (most recent call last):\n", prefill]
    out += [debug() for _ in range(4000)]  # two chunks and more of plain lines, no stats
    out += [decode(i) for i in range(2)]
    out.append("0\n")
    out += [decode(i) + debug() for i in range(2000)]
    path = tmp_path / "x.log"
    path.write_text("".join(out))
    got = check(path, 3)
    with path.open("rb") as f:  # (line by line writes the floats back: compare the values)
        assert json.loads(as_json(build_report(f, path.name, chunk=SMALL, fast=False))) == \
            json.loads(got)
    assert b'"crash": null' in got and b'"phase": "serving"' in got


def test_vllm_log_repeated_with_a_crash_at_the_end(tmp_path: Path) -> None:
    ok = (FIX / "vllm-cpu" / "server-eagle3.log").read_bytes()
    killed = (FIX / "vllm-cpu" / "server-eagle3-enginecore-killed.log").read_bytes()
    path = tmp_path / "x.log"
    path.write_bytes(repeat_to(ok, 6 * SMALL) + killed)
    check(path, 5)


def test_generated_benchmark_log(tmp_path: Path) -> None:
    generate = bench_module("bench_report").generate

    path = tmp_path / "gen.log"
    generate(path, 20_000)
    check(path, 3)


@pytest.mark.parametrize("window", [40, 300, 5000])
@pytest.mark.parametrize("log", [LOGS[0], LOGS[-1]], ids=lambda p: p.name)
def test_workers_read_their_chunks_in_small_windows(tmp_path: Path, log: Path, window: int,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker reads a chunk ``WINDOW`` bytes at a time, growing its buffer for a longer line
    (40: nearly every line): the JSON is still the serial one."""
    monkeypatch.setattr(rp, "WINDOW", window)
    path = tmp_path / "x.log"
    path.write_bytes(repeat_to(log.read_bytes() + b"x" * 3 * window + b"\n", 6 * SMALL))
    check(path, 3)


@pytest.mark.parametrize("piece", [1, 100, PIECE, 1 << 30])
def test_summaries_cut_runs_into_pieces_and_keep_one_tail(tmp_path: Path, piece: int) -> None:
    """Runs summarized ``piece`` bytes at a time (1: a line each) apply to the same report, and
    only the last ``TAIL`` values of a chunk travel as floats."""
    path = tmp_path / "x.log"
    path.write_text("".join(decode(i) + debug() for i in range(3000)))
    data = b"\n" + path.read_bytes()
    items = summarize_chunk(data, len(data), piece)[0]
    runs = [it for it in items if isinstance(it, NumberRun)]
    assert len(runs) > 1 if piece < len(data) else len(runs) == 1
    assert sum(len(r.acc_tail) for r in runs) == min(600, 3000)
    b = ReportBuilder("x.log")
    b.apply(summarize_chunk(data, len(data), piece), lambda: bytearray(data))
    ref = ReportBuilder("x.log")
    ref.feed(bytearray(data), len(data))
    assert as_json(b.finish()) == as_json(ref.finish())


# ------------------------------------------------------------------------------ failures
@pytest.mark.parametrize("fail_after", [0, 2])
def test_a_failing_worker_is_read_serially_and_reaped(tmp_path: Path, fail_after: int,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capfd: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "x.log"
    path.write_text("".join(decode(i) + debug() for i in range(6000)))
    expected = serial(path)
    parent = os.getpid()
    calls = [0]

    def fail_in_workers(fd: int, offset: int, n: int, buf: bytearray) -> Any:
        if os.getpid() != parent:
            calls[0] += 1  # this process's own copy
            if calls[0] > fail_after:
                raise RuntimeError("boom")
        return summarize_at(fd, offset, n, buf)

    monkeypatch.setattr(rp, "summarize_at", fail_in_workers)
    assert parallel(path, 3) == expected
    assert "a worker failed (RuntimeError: boom)" in capfd.readouterr().err


def test_a_slow_worker_makes_the_parent_wait_not_pile_up(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "x.log"
    path.write_text("".join(decode(i) + debug() for i in range(12_000)))
    expected = serial(path)
    parent = os.getpid()
    most = [0]
    real_own = rp._Merge.own

    def slow_in_workers(fd: int, offset: int, n: int, buf: bytearray) -> Any:
        if os.getpid() != parent:
            time.sleep(0.3)
        return summarize_at(fd, offset, n, buf)

    def own(self: Any, index: int, buf: bytearray) -> None:
        real_own(self, index, buf)
        most[0] = max(most[0], len(self.pending))

    monkeypatch.setattr(rp, "summarize_at", slow_in_workers)
    monkeypatch.setattr(rp._Merge, "own", own)
    assert parallel(path, 2) == expected
    assert 4 <= most[0] <= 8 == rp._Merge.PENDING  # without the wait: one per chunk (~50)


def test_workers_are_killed_when_the_parent_fails(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "x.log"
    path.write_text("".join(decode(i) + debug() for i in range(6000)))

    def interrupted(self: ReportBuilder, buf: bytearray, end: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(ReportBuilder, "feed", interrupted)
    with pytest.raises(KeyboardInterrupt):
        parallel(path, 4)
    # the autouse fixture checks that no child process is left


# ------------------------------------------------------------------------------ CLI
def test_cli_workers_flag_env_and_debug_rss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    path = tmp_path / "x.log"
    path.write_text("".join(decode(i) + debug() for i in range(200)))
    assert main(["report", "--json", "--workers", "1", "--debug-rss", str(path)]) == 0
    out = capsysbinary.readouterr()
    assert b'"lines": 400' in out.out and b"peak RSS KiB: self " in out.err
    monkeypatch.setenv(rp.ENV_WORKERS, "3")
    assert rp.default_workers() == 3
    monkeypatch.setenv(rp.ENV_WORKERS, "zero")
    assert 1 <= rp.default_workers() <= rp.MAX_WORKERS
    with pytest.raises(SystemExit):
        main(["report", "--workers", "0", str(path)])


def test_report_command_loads_no_ui_or_network_code(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    path.write_text(decode(1) + debug())
    probe = ("import sys\nfrom eagle_tui.cli import main\n"
             f"main(['report', '--json', {str(path)!r}])\n"
             "heavy = {'textual', 'httpx', 'paramiko', 'rich', 'psutil', 'asyncio',"
             " 'multiprocessing', 'concurrent', 'tempfile'}\n"
             "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy), file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60, check=True)
    assert proc.stderr.strip() == "[]"


@pytest.mark.parametrize("how", ["SIGINT to the group", "SIGTERM", "SIGKILL"])
def test_no_worker_outlives_a_signalled_report(tmp_path: Path, how: str) -> None:
    import signal

    path = tmp_path / "big.log"
    block = "".join(decode(i) + debug() for i in range(16_000)).encode()
    path.write_bytes(block * (rp.THRESHOLD * 3 // len(block)))
    # SIGINT as at a terminal, even when the suite runs as a background job (which starts
    # with SIGINT ignored, and Python then never raises KeyboardInterrupt)
    proc = subprocess.Popen([sys.executable, "-m", "eagle_tui", "report", "--json", "--workers",
                             "2", str(path)], stdout=subprocess.DEVNULL, cwd=ROOT,
                            start_new_session=True,
                            preexec_fn=sigint_as_at_a_terminal)
    me = psutil.Process(proc.pid)
    deadline = time.monotonic() + 30
    while not (workers := me.children()) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    assert workers, "the report finished before a worker was seen"
    if how == "SIGINT to the group":
        os.killpg(proc.pid, signal.SIGINT)
    else:
        os.kill(proc.pid, getattr(signal, how))
    rc = proc.wait(timeout=30)
    assert rc == {"SIGINT to the group": 130, "SIGTERM": 143, "SIGKILL": -9}[how]

    def alive(p: psutil.Process) -> bool:
        try:
            return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return False

    # reaped before the parent exits; an orphan (SIGKILL) stops after at most one chunk
    deadline = time.monotonic() + (5 if how == "SIGKILL" else 0)
    while any(map(alive, workers)) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not any(map(alive, workers))


def test_summary_files_are_length_prefixed_and_a_short_one_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "rec.bin"
    record = marshal.dumps((3, ["x", 1]))
    path.write_bytes(len(record).to_bytes(8, "little") + record
                     + (100).to_bytes(8, "little") + b"cut")
    with path.open("rb") as f:
        assert rp._load(f) == (3, ["x", 1])
        with pytest.raises(RuntimeError, match="cut short"):
            rp._load(f)


def test_debug_rss_reports_the_tree_from_workers_private_memory(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    path.write_text("".join(decode(i) + debug() for i in range(6000)))
    rss: list[tuple[int, int]] = []
    parallel(path, 3, rss)
    assert len(rss) == 2
    if Path("/proc/self/smaps_rollup").exists():
        assert rp.private_kib() > 0
        assert all(0 < private < peak for peak, private in rss)  # private: a part of the RSS


def test_a_summary_file_is_deleted_once_applied(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The temporary files hold only summaries not merged yet (/tmp may be memory)."""
    path = tmp_path / "x.log"
    path.write_text("".join(decode(i) + debug() for i in range(6000)))
    expected = serial(path)
    real_load, real_apply = rp._load, ReportBuilder.apply
    loaded: list[str] = []
    left: list[str] = []

    def load(f: Any) -> Any:
        loaded.append(f.name)
        return real_load(f)

    def apply(self: ReportBuilder, summary: Any, reread: Any) -> None:
        left.extend(p for p in loaded if os.path.exists(p))
        real_apply(self, summary, reread)

    monkeypatch.setattr(rp, "_load", load)
    monkeypatch.setattr(ReportBuilder, "apply", apply)
    assert parallel(path, 3) == expected
    assert len(loaded) >= 2 and left == []


@pytest.mark.parametrize("seed", range(4))
def test_random_mixes_of_fixture_lines_long_lines_and_endings(tmp_path: Path, seed: int,
                                                              monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    """Fixture lines shuffled with blank, binary and window-sized lines, any ending: the same
    JSON from 2-5 processes, with worker windows smaller than many lines."""
    rng = random.Random(seed)
    monkeypatch.setattr(rp, "WINDOW", rng.choice([64, 1000, 1 << 14]))
    pool = [line for log in LOGS for line in log.read_bytes().splitlines()]
    odd = [b"", b"\xff\xfe garbage \x1b[2J", b"x" * rng.randint(2000, 20_000), b"\r", b"[ ] )"]
    lines = [rng.choice(odd) if rng.random() < 0.05 else rng.choice(pool)
             for _ in range(rng.randint(3000, 9000))]
    data = b"\n".join(lines) + rng.choice([b"", b"\n", b"tail without newline"])
    path = tmp_path / "mix.log"
    path.write_bytes(data)
    with path.open("rb") as f:
        expected = as_json(build_report(f, path.name, chunk=SMALL))
    assert parallel(path, rng.randint(2, 5)) == expected


class _Growing(io.FileIO):
    """A log that a writer extends while it is read: its first reads append lines first."""

    grown = 0

    def readinto(self, b: Any) -> int | None:
        if self.grown < 3:
            self.grown += 1
            with open(self.name, "ab") as w:  # type: ignore[arg-type]
                w.write("".join(decode(i) for i in range(2000)).encode())
        return super().readinto(b)


def test_a_growing_log_is_reported_as_it_was_at_the_start(tmp_path: Path) -> None:
    """``report`` read on while a log grew: a writer faster than the parser kept it reading for
    ever. It reads the size the file had when it started: the lines of that moment, once (the
    parallel report's chunks were cut at that size already; its serial rest is read so too)."""
    path = tmp_path / "live.log"
    path.write_text("".join(decode(i) for i in range(3000)))
    expected = json.loads(serial(path))
    with _Growing(path, "rb") as f:
        got = json.loads(as_json(rp.build_report_parallel(
            f, path.name, workers=1, threshold=0, min_bytes=1, chunk=SMALL)))
    assert got["lines"] == expected["lines"] == 3000
    assert f.grown  # (it grew while it was read)
    assert got == expected
