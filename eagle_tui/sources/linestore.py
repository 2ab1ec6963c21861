"""File-backed scrollback, the I/O half: a line index built in the background, lines on demand.

The log pane keeps only the tail of a big log in memory; scrolling up past it continues into
the file (:mod:`eagle_tui.model.buffers.linewindow` is the pure half, the view's). A
:class:`LineStore` is one file on one host: it builds the sparse :class:`~eagle_tui.model.
lineindex.LineIndex` of ``[0, start)`` (the bytes before the tail) in the background, in
chunks read with :meth:`~eagle_tui.transport.base.Transport.read_range`, and reads the line
ranges the view asks for. Lines after ``start`` that the view's buffer has since pruned are
indexed on demand, by scanning on from where the index stopped.

GIL and event loop: each chunk (512 KiB) is scanned with C-level calls only and the scan
yields to the loop after each one, so the session thread and the UI keep answering while a
5 M-line file is indexed.

More in docs/architecture.md, "Module notes", ``sources/linestore``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence

from eagle_tui.model.buffers.lineindex import LineIndex, RangeLines
from eagle_tui.model.buffers.linewindow import (
    FileMatch,
    IndexFile,
    IndexProgress,
    Intent,
    LinesRead,
    Reply,
    SearchFile,
    decode_lines,
    search_lines,
)
from eagle_tui.transport.base import MAX_RANGE_BYTES, Transport, TransportError
from eagle_tui.userpattern import PatternRefused, compile_query

log = logging.getLogger(__name__)

SCAN_CHUNK = 512 << 10  # bytes per index read (and slice): a short C-level scan per yield
REMOTE_CHUNK = MAX_RANGE_BYTES  # bytes per index read over SSH (one exec each)
READ_CHUNK = 1 << 20  # bytes per read of a line range
READ_BUDGET = 4 << 20  # text bytes one answer carries at most (the rest is asked for again)
DEADLINE_S = 10.0  # each range read's deadline
PROGRESS_EVERY = 32 << 20  # bytes between two progress answers while indexing
SEARCH_LINES = 4096  # lines searched per step (one or a few range reads)
SEARCH_PROGRESS = 200_000  # lines between two progress answers of a search


class LineStore:
    """One file's index and range reads (on the loop of ``transport``)."""

    def __init__(self, transport: Transport, path: str, start: int, *,
                 scan_chunk: int = SCAN_CHUNK, deadline: float = DEADLINE_S) -> None:
        self.transport = transport
        self.path = path
        self.start = start
        self.index = LineIndex()
        # over SSH each read is one exec: fewer, bigger reads (scanned in SCAN_CHUNK slices)
        self.scan_chunk = scan_chunk if transport.host == "" else max(scan_chunk, REMOTE_CHUNK)
        self.deadline = deadline
        self.error = ""
        self._prefix_done = asyncio.Event()
        self._lock = asyncio.Lock()  # one scan at a time (the prefix, or one on past it)

    @property
    def prefix_done(self) -> bool:
        return self._prefix_done.is_set()

    async def build(self, progress: Callable[[IndexProgress], None]) -> None:
        """Index ``[0, start)``, telling ``progress`` now and then and once at the end."""
        host = self.transport.host
        try:
            async with self._lock:
                last = 0
                while self.index.scanned < self.start:
                    n = min(self.scan_chunk, self.start - self.index.scanned)
                    if not await self._scan_once(n):
                        break  # the file is shorter than it was (truncated: the tail restarts)
                    if self.index.scanned - last >= PROGRESS_EVERY:
                        last = self.index.scanned
                        progress(IndexProgress(self.path, host, self.index.scanned, self.start,
                                               self.index.lines))
        except TransportError as exc:
            self.error = str(exc)
            progress(IndexProgress(self.path, host, self.index.scanned, self.start,
                                   self.index.lines, error=self.error))
            return
        finally:
            self._prefix_done.set()
        progress(IndexProgress(self.path, host, self.index.scanned, self.start,
                               self.index.lines, done=True))

    async def _scan_once(self, n: int) -> bool:
        data = await self.transport.read_range(self.path, self.index.scanned, n, self.deadline)
        if not data:
            return False
        for at in range(0, len(data), SCAN_CHUNK):  # (a remote read is several slices)
            self.index.feed(data[at:at + SCAN_CHUNK])
            await asyncio.sleep(0)  # the loop (and through it the UI thread) gets its turn
        return True

    async def _ensure(self, lines: int) -> None:
        """Index at least ``lines`` complete lines (or all there are): past ``start`` the scan
        goes on from where it stopped, as far as needed."""
        await self._prefix_done.wait()
        if self.error:
            raise TransportError(self.error)
        async with self._lock:
            while self.index.lines < lines:
                if not await self._scan_once(self.scan_chunk):
                    return

    async def read(self, first: int, count: int) -> tuple[int, list[bytes], set[int]]:
        """Up to ``count`` raw lines from 0-based line ``first`` (fewer at the end of what is
        indexed or past the byte budget): ``(first, lines, cut)``."""
        await self._ensure(first + count)
        index = self.index
        count = max(0, min(count, index.lines - first))
        if count == 0:
            return first, [], set()
        offset, skip = index.seek(first)
        end = index.end_of(first + count - 1)
        lines = RangeLines(skip, count, max_bytes=READ_BUDGET)
        while offset < end and not lines.done:
            data = await self.transport.read_range(self.path, offset,
                                                   min(READ_CHUNK, end - offset), self.deadline)
            if not data:
                break
            lines.feed(data)
            offset += len(data)
        return first, lines.kept, lines.cut


    async def search(self, intent: SearchFile, progress: Callable[[FileMatch], None]) -> None:
        """Find the first (last) match of ``[lo, hi)``, block by block, in the direction asked;
        progress now and then, the answer once (``done``). Cancelled by a newer search."""
        lo, hi = max(0, intent.lo), intent.hi
        total = max(0, hi - lo)
        host = self.transport.host
        try:
            pattern = compile_query(intent.query)
        except PatternRefused as exc:
            progress(FileMatch(self.path, host, intent.token, done=True, error=str(exc)))
            return

        def answer(line: int | None = None, searched: int = total, done: bool = True
                   ) -> FileMatch:
            return FileMatch(self.path, host, intent.token, line, searched, total, done)

        if pattern is None or total == 0:
            progress(answer())
            return
        searched, last = 0, 0
        while searched < total:
            n = min(SEARCH_LINES, total - searched)
            first = hi - searched - n if intent.backward else lo + searched
            raw = await self._raw(first, n)
            found = search_lines(pattern, raw, intent.backward)
            if found is not None:
                progress(answer(first + found))
                return
            if len(raw) < n:  # the file ends before ``hi``
                break
            searched += n
            if searched - last >= SEARCH_PROGRESS:
                last = searched
                progress(answer(searched=searched, done=False))
            await asyncio.sleep(0)
        progress(answer())

    async def _raw(self, first: int, count: int) -> list[bytes]:
        """``count`` raw lines from ``first`` (fewer at the end), over as many reads as their
        budget takes."""
        out: list[bytes] = []
        while len(out) < count:
            _, raw, _ = await self.read(first + len(out), count - len(out))
            if not raw:
                break
            out.extend(raw)
        return out


class Scrollback:
    """The app's handle on the line stores: ``request(intent, reply)`` from any thread."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._transports: dict[str, Transport] = {}
        self._stores: dict[tuple[str, str], LineStore] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._searches: dict[tuple[str, str], asyncio.Task[None]] = {}

    def attach(self, transports: Sequence[Transport]) -> None:
        """On the transports' loop (the session thread): requests run there from now on."""
        self._loop = asyncio.get_running_loop()
        self._transports = {tr.host: tr for tr in transports}

    @property
    def attached(self) -> bool:
        return self._loop is not None

    def request(self, intent: Intent, reply: Callable[[Reply], None]) -> None:
        """Ask for an index or a line range; ``reply`` is called once per answer (on the
        store's loop). Before :meth:`attach`, or after the loop closed, nothing can answer."""
        loop = self._loop
        if loop is None or loop.is_closed():
            reply(self._failed(intent, "the file cannot be read from here"))
            return
        with contextlib.suppress(RuntimeError):  # the loop closed in between: the app is ending
            loop.call_soon_threadsafe(self._start, intent, reply)

    def _start(self, intent: Intent, reply: Callable[[Reply], None]) -> None:
        task = asyncio.get_running_loop().create_task(self._serve(intent, reply))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _serve(self, intent: Intent, reply: Callable[[Reply], None]) -> None:
        try:
            if isinstance(intent, IndexFile):
                transport = self._transports.get(intent.host)
                if transport is None:
                    reply(self._failed(intent, f"no connection to {intent.host or 'this host'}"))
                    return
                store = LineStore(transport, intent.path, intent.start)
                self._stores[(intent.host, intent.path)] = store
                await store.build(reply)
                return
            store_ = self._stores.get((intent.host, intent.path))
            if store_ is None:
                reply(self._failed(intent, "the file has no index"))
                return
            if isinstance(intent, SearchFile):
                await self._search(store_, intent, reply)
                return
            first, raw, cut = await store_.read(intent.first, intent.count)
            reply(LinesRead(intent.path, intent.host, first, intent.count,
                            decode_lines(raw, first, intent.host, cut)))
        except (TransportError, ValueError) as exc:
            reply(self._failed(intent, str(exc)))

    async def _search(self, store: LineStore, intent: SearchFile,
                      reply: Callable[[Reply], None]) -> None:
        """One search per file at a time: a newer one cancels the one under way."""
        key = (intent.host, intent.path)
        older = self._searches.get(key)
        current = asyncio.current_task()
        if older is not None and older is not current:
            older.cancel()
        if current is not None:
            self._searches[key] = current
        try:
            await store.search(intent, reply)
        finally:
            if self._searches.get(key) is current:
                del self._searches[key]

    @staticmethod
    def _failed(intent: Intent, why: str) -> Reply:
        if isinstance(intent, IndexFile):
            return IndexProgress(intent.path, intent.host, 0, intent.start, 0, error=why)
        if isinstance(intent, SearchFile):
            return FileMatch(intent.path, intent.host, intent.token, done=True, error=why)
        return LinesRead(intent.path, intent.host, intent.first, intent.count, error=why)

    async def close(self) -> None:
        """Cancel the reads under way (on the store's loop, before the transports close)."""
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._stores.clear()


__all__ = ["DEADLINE_S", "READ_BUDGET", "SCAN_CHUNK", "LineStore", "Scrollback"]
