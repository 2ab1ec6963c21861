"""``report`` on a big regular file with several processes: chunks, forked workers, a merge.

The parent cuts the file into chunks of whole lines and puts their indices in a pipe; it and the
forked workers claim indices one at a time, so the work stays balanced on a busy machine. A
worker summarizes each chunk into a temporary file of its own; the parent applies the summaries
in file order through the serial code, so the JSON is byte-identical to one process's. A failed
worker's chunks are read serially; workers never outlive the command. stdin, small files and
``workers == 1`` stay serial.

More in docs/architecture.md, "Module notes", ``report/parallel``.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import stat
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, BinaryIO, cast

from eagle_tui.console import warn
from eagle_tui.model.boundary.termtext import inert

from .chunk_summary import ChunkSummarizer, ChunkSummary, from_wire, summarize_chunk, to_wire
from .reader import (
    CHUNK,
    Chunk,
    buffer_size,
    chunk_bytes,
    cut_long_lines,
    plan,
    read_at,
    read_chunks,
)
from .workfiles import memory_path, private_kib, read_int, summary_path

if TYPE_CHECKING:
    from eagle_tui.model.events import LogOpened

    from .builder import ReportBuilder

THRESHOLD = 16 << 20  # smaller files: the serial path (forking would not pay)
MIN_BYTES = 8 << 20  # at least this much of the file per process
# a worker's own memory is small (most of its pages stay shared with the parent), but each adds
# a fixed start-up cost that more workers stop paying back (docs/performance.md)
MAX_WORKERS = 12
MAX_CHUNKS = 16_000  # 4-byte chunk indices in the work pipe's 64 KiB buffer
ENV_WORKERS = "EAGLE_TUI_REPORT_WORKERS"
PAR_CHUNK = 2 << 20  # the chunks handed out: ~17,000 lines; many more than processes
WINDOW = 1 << 19  # a worker reads its chunks this much at a time

def default_workers() -> int:
    env = os.environ.get(ENV_WORKERS, "").strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, MAX_WORKERS))


def summarize_at(fd: int, offset: int, n: int, buf: bytearray) -> tuple[ChunkSummary, bytearray]:
    """The summary of the chunk ``(offset, n)`` (whole lines), read a window (``len(buf) - 1``
    bytes) at a time into ``buf``, whose first byte is a newline; and the buffer, grown when a
    line was longer than it. A worker's buffer is its largest allocation: a window keeps it at
    a fraction of the chunk."""
    summarizer = ChunkSummarizer()
    pos = keep = 0  # keep: bytes of a pending line at buf[1:1 + keep]
    while pos < n:
        k = min(len(buf) - 1 - keep, n - pos)
        read_at(fd, buf, offset + pos, k, 1 + keep)
        pos += k
        top = cut_long_lines(buf, 1, 1 + keep + k)  # (lines over 1 MiB: cut as serially)
        nl = buf.rfind(b"\n", 1, top)
        if nl < 1:  # no line ends in the window: make room for the rest of this one
            keep = top - 1
            buf.extend(bytes(len(buf)))
            continue
        summarizer.add(buf, nl + 1)
        keep = top - nl - 1
        buf[1 : 1 + keep] = buf[nl + 1 : top]
    return summarizer.result(), buf


def _claim(queue: int) -> int | None:
    """The next chunk index from the shared pipe (a read of 4 bytes is atomic), or ``None``."""
    data = os.read(queue, 4)
    return int.from_bytes(data, "little") if len(data) == 4 else None


def _worker(fd: int, queue: int, chunks: list[Chunk], tmp: str, done: int, me: int,
            length: int, measure: bool) -> int:
    """A forked worker's whole life: summarize each chunk it claims into its own file in
    ``tmp`` (``to_wire``'s tuples as ``marshal`` bytes, after their length), telling the parent
    through ``done`` once the file is complete; the exit status. The parent deletes a file as
    soon as it has applied it, so the temporary files hold only what is not merged yet. With
    ``measure``, the peak of :func:`private_kib` (after each chunk, its summary still alive)
    goes to ``memory_path(tmp, me)``."""
    try:
        buf = bytearray(min(length, WINDOW + 1))
        buf[0] = 0x0A
        peak = 0
        while (index := _claim(queue)) is not None:
            summary, buf = summarize_at(fd, *chunks[index], buf)
            if measure:
                peak = max(peak, private_kib())
            data = marshal.dumps((index, to_wire(summary)))
            del summary
            with open(summary_path(tmp, index), "wb") as f:
                f.write(len(data).to_bytes(8, "little"))
                f.write(data)
            del data
            os.write(done, me.to_bytes(4, "little") + index.to_bytes(4, "little"))
        if measure:
            with open(memory_path(tmp, me), "w") as m:
                m.write(str(peak))
        return 0
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the parent is gone (killed): nobody to tell, nothing to report
        return 1
    except BaseException as exc:  # reported; the parent reads the chunks itself
        warn(inert(f"eagle-tui report: a worker failed ({type(exc).__name__}: {exc}); "
                   "reading its part serially"))
        return 1


def _load(f: BinaryIO) -> Any:
    """What a worker wrote: the length of its ``marshal`` bytes, then those. Read whole:
    ``marshal.load`` on a file reads it a few bytes at a time, far slower than one read."""
    size = int.from_bytes(f.read(8), "little")
    data = f.read(size)
    if len(data) != size:
        raise RuntimeError("a worker's chunk summary is cut short")
    return marshal.loads(data)


def _fork(parent_only: tuple[int, ...], *args: Any) -> int:
    """Fork a worker running ``_worker(*args)``; it first closes ``parent_only`` (the read end
    of the "done" pipe: while a worker holds it, a write after the parent's death would not
    fail, and the worker would go on alone)."""
    pid = os.fork()
    if pid == 0:  # the child: never returns into the caller's code
        code = 1
        try:
            for fd in parent_only:
                os.close(fd)
            code = _worker(*args)
        finally:
            os._exit(code)
    return pid


def _on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # unwinds through ``finally``: the workers are reaped


def _reap(pids: dict[int, int]) -> None:
    """Kill and reap the workers still listed (the parent is leaving early)."""
    import signal

    for pid in list(pids):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
        del pids[pid]


class _Merge:
    """The parent's side: applies every chunk exactly once, in file order, as soon as it can.

    A chunk is fed directly when the parent claims it next in order; a chunk the parent claims
    out of order is summarized and kept (a few at most: the parent waits for the workers when
    ``PENDING`` pile up); a worker's chunk is read from its file (and the file deleted) once its
    "done" message came.
    Applying as the summaries arrive keeps the merge off the end of the run, and the parent
    claims a chunk only when no summary is ready to apply (:meth:`step`): with many workers,
    they come faster than one process applies them and summarizes chunks too.
    """

    PENDING = 8

    def __init__(self, b: ReportBuilder, fd: int, chunks: list[Chunk], done: int,
                 tmp: str) -> None:
        self.b, self.fd, self.chunks, self.done_fd, self.tmp = b, fd, chunks, done, tmp
        self.pending: dict[int, ChunkSummary] = {}  # the parent's own, out of order
        self.done: dict[int, int] = {}  # chunk → worker whose summary file for it is complete
        self.applied = 0  # chunks applied so far (the next one to apply)
        self.claimed = -1  # every chunk up to this one has been claimed by someone
        self.gone = False  # every worker has exited: what they did not deliver, never comes
        self._partial = b""
        self._blocking = True  # the pipe's mode, switched only when a call needs the other
        self.progress: Callable[[int, int], None] | None = None  # (bytes, lines) applied

    def own(self, index: int, buf: bytearray) -> None:
        """A chunk the parent claimed."""
        self.claimed = index
        offset, n = self.chunks[index]
        read_at(self.fd, buf, offset, n)
        end = cut_long_lines(buf, 1, n + 1)
        if index == self.applied:
            self.b.feed(buf, end)
            self.applied += 1
        else:
            self.pending[index] = summarize_chunk(buf, end)
        self.messages(block=len(self.pending) >= self.PENDING)
        self.advance()

    def messages(self, block: bool) -> None:
        """Read the workers' "done" messages (end of file: every worker is gone)."""
        if self.gone:
            return
        if block != self._blocking:  # (``step`` asks many times a chunk: no syscall each)
            os.set_blocking(self.done_fd, block)
            self._blocking = block
        try:
            data = os.read(self.done_fd, 1 << 12)
        except BlockingIOError:
            return
        if not data:
            self.gone = True
            return
        data = self._partial + data
        whole = len(data) - len(data) % 8
        for i in range(0, whole, 8):
            me = int.from_bytes(data[i : i + 4], "little")
            self.done[int.from_bytes(data[i + 4 : i + 8], "little")] = me
        self._partial = data[whole:]

    def step(self) -> bool:
        """Apply what has arrived without waiting; whether anything was applied."""
        before = self.applied
        self.messages(block=False)
        self.advance()
        return self.applied > before

    def advance(self) -> None:
        while self.applied < len(self.chunks):
            index = self.applied
            offset, n = self.chunks[index]
            reread = partial(chunk_bytes, self.fd, offset, n)
            if index in self.pending:
                self.b.apply(self.pending.pop(index), reread)
            elif index in self.done:
                me = self.done.pop(index)
                path = summary_path(self.tmp, index)
                with open(path, "rb") as f:
                    got, wire = _load(f)
                os.unlink(path)
                if got != index:
                    raise RuntimeError(f"worker {me} wrote chunk {got} where {index} was due")
                self.b.apply(from_wire(wire), reread)
            elif self.gone and index <= self.claimed:  # claimed by a worker that failed
                buf = reread()
                self.b.feed(buf, len(buf))
            else:
                return
            self.applied += 1
            if self.progress is not None:
                self.progress(offset + n, self.b.lines)

    def finish(self) -> None:
        """After the last claim: apply the rest as it comes; once every worker is gone, feed
        what is still missing (the chunks of a worker that failed) serially."""
        self.claimed = len(self.chunks) - 1
        while True:
            self.advance()
            if self.applied == len(self.chunks):
                return
            self.messages(block=True)


def build_report_parallel(f: BinaryIO, name: str, *, baseline: float | None = None,
                          workers: int | None = None, threshold: int = THRESHOLD,
                          min_bytes: int = MIN_BYTES, chunk: int = PAR_CHUNK,
                          rss: list[tuple[int, int]] | None = None,
                          bench_mark: list[int] | None = None) -> dict[str, Any]:
    """``build_report(f, name)``, with worker processes for a big regular file.

    ``workers`` counts the parent (1: serial). ``rss``, if given, receives each worker's peak
    RSS (``wait4``) and peak private memory (:func:`private_kib`), in KiB, for ``--debug-rss``;
    ``bench_mark`` the offset of the first bench marker's line, as in ``build_report``. A
    regular file is read up to its size at the start: a log still being written is reported
    as it was then, in bounded time, however fast it grows.
    """
    st = os.fstat(f.fileno())
    if not stat.S_ISREG(st.st_mode):
        from .builder import build_report

        return build_report(f, name, baseline=baseline, bench_mark=bench_mark)
    return fold_parallel(f, name, baseline=baseline, workers=workers, threshold=threshold,
                         min_bytes=min_bytes, chunk=chunk, rss=rss,
                         size=st.st_size).result(bench_mark)


class _Limited:
    """The first ``size`` bytes of a binary file, from its current position on: what the serial
    reader of :func:`fold_parallel` may read of a log that is still being written."""

    def __init__(self, f: BinaryIO, size: int) -> None:
        self.f, self.left = f, max(0, size - f.tell())

    def fileno(self) -> int:
        return self.f.fileno()

    def read(self, n: int) -> bytes:
        data = self.f.read(min(n, self.left))
        self.left -= len(data)
        return data

    def readinto(self, buf: memoryview) -> int:
        """``read`` without its copy (the reader's buffer is filled in place)."""
        if self.left <= 0:
            return 0
        into = getattr(self.f, "readinto", None)
        with buf[: self.left] as part:
            if into is None:
                data = self.f.read(len(part))
                part[: len(data)] = data
                n = len(data)
            else:
                n = into(part) or 0
        self.left -= n
        return n


def _limited(f: BinaryIO, size: int) -> BinaryIO:
    return cast("BinaryIO", _Limited(f, size))


def fold_parallel(f: BinaryIO, name: str, *, baseline: float | None = None,
                  workers: int | None = None, threshold: int = THRESHOLD,
                  min_bytes: int = MIN_BYTES, chunk: int = PAR_CHUNK,
                  rss: list[tuple[int, int]] | None = None, size: int | None = None,
                  progress: Callable[[int, int], None] | None = None,
                  opened: LogOpened | None = None) -> ReportBuilder:
    """The builder of :func:`build_report_parallel`, not finished yet, over the first ``size``
    bytes of the regular file ``f`` (all of it by default; ``size`` must be a line start).

    What the dashboard's background summary of a log opened at its end needs (``.prefix``):
    the folded state and the spools of the lines before the in-memory tail. ``progress(bytes,
    lines)`` is called after each chunk applied in file order; ``opened`` goes to the
    builder (``ReportBuilder``).
    """
    fd = f.fileno()
    st = os.fstat(fd)
    total = st.st_size if size is None else min(size, st.st_size)
    procs = default_workers() if workers is None else workers
    procs = min(procs, total // max(min_bytes, 1)) if total >= threshold else 1
    usable = procs > 1 and stat.S_ISREG(st.st_mode) and hasattr(os, "fork") \
        and hasattr(os, "preadv")  # POSIX (Linux, BSD); elsewhere the serial path
    layout = plan(fd, total, chunk) if usable else None
    if layout is None or not 2 <= len(layout[0]) <= MAX_CHUNKS:
        return _fold_serial(f, name, baseline, size, progress, opened)
    import signal  # these two only for a big file: each import counts in a short command
    import tempfile

    chunks, rest = layout
    length = buffer_size(st.st_size, chunk)
    pids: dict[int, int] = {}  # pid → worker number
    with tempfile.TemporaryDirectory(prefix="eagle-tui-report-") as tmp:
        queue, w = os.pipe()
        done_r, done_w = os.pipe()
        sigterm: Any = None
        with contextlib.suppress(ValueError):  # not the main thread: leave signals alone
            sigterm = signal.signal(signal.SIGTERM, _on_sigterm)
        try:
            # every index is in the pipe before any process reads: a claim never blocks
            try:
                os.write(w, b"".join(i.to_bytes(4, "little") for i in range(len(chunks))))
            finally:
                os.close(w)
            first = _claim(queue)  # 0: the parent starts with the state-dependent beginning
            for me in range(1, min(procs, len(chunks))):
                pids[_fork((done_r,), fd, queue, chunks, tmp, done_w, me, length,
                           rss is not None)] = me
            os.close(done_w)  # the workers hold it now: end of file once they are all gone
            done_w = -1
            # the fold's imports (the parser, the state, the reducer) after the fork: the
            # workers, which only summarize, start that much sooner
            from .builder import ReportBuilder

            b = ReportBuilder(name, baseline, opened)
            merge = _Merge(b, fd, chunks, done_r, tmp)
            merge.progress = progress
            buf = bytearray(length)
            buf[0] = 0x0A
            index = first
            while index is not None:
                merge.own(index, buf)
                while merge.step():  # merging first: with many workers it is the long pole
                    pass
                index = _claim(queue)
            merge.finish()
            for pid in list(pids):
                _, _, usage = os.wait4(pid, 0)
                me = pids.pop(pid)
                if rss is not None:
                    rss.append((usage.ru_maxrss, read_int(memory_path(tmp, me))))
            f.seek(rest)
            for data, end, last in read_chunks(f if size is None else _limited(f, total), chunk):
                b.chunk(data, end, last)
            return b
        finally:
            for end_fd in (queue, done_r, done_w):
                if end_fd >= 0:
                    os.close(end_fd)
            _reap(pids)
            if sigterm is not None:
                signal.signal(signal.SIGTERM, sigterm)


def _fold_serial(f: BinaryIO, name: str, baseline: float | None, size: int | None,
                 progress: Callable[[int, int], None] | None,
                 opened: LogOpened | None) -> ReportBuilder:
    """``build_report``'s fold (its reader and chunks), of the first ``size`` bytes (all)."""
    from .builder import ReportBuilder

    b = ReportBuilder(name, baseline, opened)
    done = 0
    for buf, end, last in read_chunks(f if size is None else _limited(f, size), CHUNK):
        b.chunk(buf, end, last)
        done += end - 1
        if progress is not None:
            progress(done, b.lines)
    return b


__all__ = ["ENV_WORKERS", "MAX_CHUNKS", "MAX_WORKERS", "MIN_BYTES", "THRESHOLD",
           "build_report_parallel", "default_workers", "fold_parallel", "private_kib",
           "summarize_at"]
