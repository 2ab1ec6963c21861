"""The one line framer: bytes of a log as they are read → frames of whole lines for the parser.

Every reader of a log (the live tail, the raw-log replay) hands its bytes to a
:class:`LineFramer` and the frames it gives to the parser (:class:`~.logfeed.LogFeed` does both,
with the stats thinning of a catch-up). The framer owns, and is the only place that decides:
the byte ``offset`` a reader resumes at (nothing lost or repeated), the partial last line (held
until its newline or :meth:`LineFramer.finish`), the over-long cut (a line past
:data:`MAX_LINE_BYTES` is handed out as a *cut* frame, marked :data:`CUT_MARK` by the parser),
and catch-up vs visible (attaching to a log of a million lines must not build a million
``LogLine`` s nobody will scroll to). docs/architecture.md ("Module notes") has each in full.

Every buffer is bounded in bytes: the partial line by ``max_line``, the held tail by
``tail_bytes`` (and ``tail_lines``), so a file without a single newline cannot grow memory.
Pure: no I/O, no clock, no parser.
"""

from __future__ import annotations

from collections import deque

from eagle_tui.model.events import LogLine
from eagle_tui.model.ingest.lines import MAX_LINE_BYTES
from eagle_tui.model.ingest.normalize import sanitize
from eagle_tui.model.record import Record, record

TAIL_LINES = 10_000  # lines a catch-up (or a burst) makes visible
TAIL_BYTES = 8 << 20  # ... and at most this many bytes of them
CUT_MARK = " \u2026[line cut at 1 MiB]"  # appended to the text of a cut line (see ``is_cut``)
# What the parsers read of a line: its first PARSE_CHARS characters for the engine parsers (the
# longest real line that carries a value is SGLang 0.5.x's ``server_args`` dump), its
# first SCAN_CHARS for the crash, kind and evidence scans (an exception names its cause at its
# start). The whole line (up to MAX_LINE_BYTES) is still shown. So the work per line is bounded,
# whatever its length: a few megabyte lines once stalled the parser in these scans.
PARSE_CHARS = 32 << 10
SCAN_CHARS = 8 << 10


def is_cut(line: LogLine) -> bool:
    """True for a line the framer cut at :data:`MAX_LINE_BYTES` (its rest is the next line)."""
    return line.text.endswith(CUT_MARK)


def held_to_contract(line: LogLine) -> LogLine:
    """A ``LogLine`` that did not come from the parser (a record file, which anyone can write)
    held to what the parser's lines guarantee: sanitized text of at most
    :data:`MAX_LINE_BYTES` characters (then marked cut). The parser's own lines come back as
    they are (the same object), for the cost of two C-level checks."""
    text = line.text
    if len(text) <= MAX_LINE_BYTES and text.isascii() and text.isprintable():
        return line
    safe: str = sanitize(text)
    if len(safe) > MAX_LINE_BYTES:
        safe = safe[:MAX_LINE_BYTES] + CUT_MARK
    return line if safe == text else LogLine(line.lineno, safe, line.kind, line.host)


@record
class Frame(Record):
    """Bytes of the log handed to the parser at once.

    ``data`` is whole lines, each ending with a newline; or, when ``single``, one line without
    its newline: a line ``cut`` at :data:`MAX_LINE_BYTES` (its rest follows), or the last line of
    a finished file that has no newline. ``start`` is its byte offset in the file (every byte of
    ``data`` is a byte of the file). ``visible``: its lines are shown; otherwise only their
    derived events (phases, stats, crashes) matter.
    """

    data: bytes
    start: int
    visible: bool
    single: bool = False
    cut: bool = False

    @property
    def end(self) -> int:
        return self.start + len(self.data)


class LineFramer:
    """Bytes in, :class:`Frame` s out (see the module docstring for what it decides)."""

    def __init__(self, offset: int = 0, *, tail_lines: int = TAIL_LINES,
                 tail_bytes: int = TAIL_BYTES, max_line: int = MAX_LINE_BYTES,
                 visible_from: int | None = None, mid_line: bool = False) -> None:
        if max_line < 4 or tail_lines < 0 or tail_bytes < 0:
            raise ValueError("max_line must be >= 4, tail_lines and tail_bytes >= 0")
        self.tail_lines = tail_lines
        self.tail_bytes = tail_bytes
        self.max_line = max_line
        self.offset = offset  # bytes handed out in frames (the resume point)
        self.visible_from = visible_from
        self.catching_up = visible_from is None
        self._partial = b""
        self._skip = mid_line  # ``offset`` may be inside a line: drop bytes up to its newline
        self._held: deque[Frame] = deque()
        self._held_lines = 0
        self._held_bytes = 0

    # ------------------------------------------------------------------ state
    @property
    def partial(self) -> int:
        """Bytes of the unterminated last line held back (at most ``max_line``)."""
        return len(self._partial)

    @property
    def held(self) -> tuple[int, int]:
        """``(lines, bytes)`` of complete lines held while catching up."""
        return self._held_lines, self._held_bytes

    @property
    def read_to(self) -> int:
        """The offset just after every byte given to :meth:`feed` (held ones included)."""
        return self.offset + self._held_bytes + len(self._partial)

    # ------------------------------------------------------------------ input
    def feed(self, data: bytes) -> list[Frame]:
        """The frames that the bytes read next make ready (in file order)."""
        out: list[Frame] = []
        if self._skip:
            nl = data.find(b"\n")
            if nl < 0:
                self.offset += len(data)
                return out
            self.offset += nl + 1
            data = data[nl + 1 :]
            self._skip = False
        if self._partial:
            data = self._partial + data
        cut = data.rfind(b"\n") + 1
        rest = data[cut:] if cut < len(data) else b""
        if cut:
            complete = data[:cut] if rest else data
            if len(complete) > self.max_line:
                self._long_lines(complete, out)
            else:
                self._lines(complete, False, out)
        while len(rest) > self.max_line:  # no newline in sight: cut it
            at = self._cut_at(rest, 0)
            self._lines(rest[:at], True, out)
            rest = rest[at:]
        self._partial = rest
        return out

    def _cut_at(self, data: bytes, start: int) -> int:
        """Where to cut the line at ``start``: ``max_line`` bytes on, not inside a character."""
        at = start + self.max_line
        while at > start + self.max_line - 3 and data[at] & 0xC0 == 0x80:
            at -= 1
        return at

    def _long_lines(self, data: bytes, out: list[Frame]) -> None:
        """Complete lines, any of which may be longer than ``max_line``: those are cut.

        One ``rfind`` per ``max_line`` bytes: the last newline within ``max_line`` bytes of a
        line start proves every line before it short enough.
        """
        m = self.max_line
        done = pos = 0  # ``data[done:pos]``: lines checked, not handed on yet
        while len(data) - pos > m:
            nl = data.rfind(b"\n", pos, pos + m + 1)
            if nl >= 0:
                pos = nl + 1
                continue
            if pos > done:
                self._lines(data[done:pos], False, out)
            at = self._cut_at(data, pos)
            self._lines(data[pos:at], True, out)
            done = pos = at
        self._lines(data[done:] if done else data, False, out)

    def caught_up(self) -> list[Frame]:
        """The reader is at the end of the file: hand out the held lines, the tail visible."""
        self.catching_up = False
        return self._release()

    def finish(self) -> list[Frame]:
        """The end of a finished file: the held lines (as :meth:`caught_up`), then the
        unterminated last line, if any, as a line of its own."""
        out = self.caught_up()
        if self._partial:
            data, self._partial = self._partial, b""
            if self.visible_from is not None:
                visible = self.offset >= self.visible_from
            else:  # the last line of the tail
                visible = self.tail_lines > 0 and len(data) <= self.tail_bytes
            out.append(self._frame(data, visible, single=True))
        return out

    def restart(self) -> list[Frame]:
        """The file was truncated or replaced: what was held (as :meth:`caught_up`), then
        everything starts again at byte 0, catching up (the partial line is dropped)."""
        out = self._release()
        self.offset = 0
        self._partial = b""
        self._skip = False
        self.visible_from = None
        self.catching_up = True
        return out

    def rewind(self) -> None:
        """The reader failed and will read again from ``offset``: forget what it gave since
        (held lines, the partial line) and catch up again."""
        self._partial = b""
        self._held.clear()
        self._held_lines = self._held_bytes = 0
        self.catching_up = self.visible_from is None

    # ------------------------------------------------------------------ framing
    def _frame(self, data: bytes, visible: bool, *, single: bool = False,
               cut: bool = False) -> Frame:
        frame = Frame(data, self.offset, visible, single, cut)
        self.offset += len(data)
        return frame

    def _lines(self, data: bytes, cut: bool, out: list[Frame]) -> None:
        """Complete lines (or one ``cut`` line) read, in order: frames now, or held."""
        if self.catching_up:
            self._hold(data, cut, out)
        elif self.visible_from is not None and self.offset < self.visible_from:
            if cut or self.offset + len(data) <= self.visible_from:  # every line starts before
                out.append(self._frame(data, False, single=cut, cut=cut))
                return
            # the first line that starts at or after ``visible_from`` is the first visible one
            at = data.find(b"\n", self.visible_from - self.offset - 1) + 1
            out.append(self._frame(data[:at], False))
            if at < len(data):
                out.append(self._frame(data[at:], True))
        elif self.visible_from is not None:  # every line from ``visible_from`` on is shown
            out.append(self._frame(data, True, single=cut, cut=cut))
        else:
            self._visible(data, cut, out)

    def _visible(self, data: bytes, cut: bool, out: list[Frame]) -> None:
        """Visible lines, but of a read larger than the tail only its tail."""
        if cut:
            out.append(self._frame(data, True, single=True, cut=True))
            return
        at = self._tail_start(data)
        if at:
            out.append(self._frame(data[:at], False))
        if at < len(data):
            out.append(self._frame(data[at:] if at else data, True))

    def _tail_start(self, data: bytes) -> int:
        """Where the last ``tail_lines`` lines, at most ``tail_bytes`` bytes, of the complete
        lines ``data`` start (0: all of it)."""
        at = 0
        if len(data) > self.tail_bytes:
            at = data.find(b"\n", len(data) - self.tail_bytes - 1) + 1
        if self.tail_lines == 0:
            return len(data)
        if data.count(b"\n", at) > self.tail_lines:
            cut = len(data) - 1
            for _ in range(self.tail_lines):
                cut = data.rfind(b"\n", 0, cut)
            at = cut + 1
        return at

    def _hold(self, data: bytes, cut: bool, out: list[Frame]) -> None:
        """Keep the lines that may still become visible; older ones go out as catch-up."""
        lines = 1 if cut else data.count(b"\n")
        self._held.append(Frame(data, self.offset + self._held_bytes, False, cut, cut))
        self._held_lines += lines
        self._held_bytes += len(data)
        held = self._held
        while len(held) > 1 and self._held_lines - _lines_of(held[0]) >= self.tail_lines:
            self._pop(out)
        while self._held_bytes > self.tail_bytes:
            first = held[0]
            excess = self._held_bytes - self.tail_bytes
            if first.single or len(first.data) <= excess:
                self._pop(out)
                continue
            at = first.data.find(b"\n", excess - 1) + 1  # the first line start past the excess
            if at == len(first.data):
                self._pop(out)
                continue
            held[0] = Frame(first.data[at:], first.start + at, False)
            self._held_lines -= first.data.count(b"\n", 0, at)
            self._held_bytes -= at
            out.append(self._frame(first.data[:at], False))

    def _pop(self, out: list[Frame]) -> None:
        first = self._held.popleft()
        self._held_lines -= _lines_of(first)
        self._held_bytes -= len(first.data)
        out.append(self._frame(first.data, False, single=first.single, cut=first.cut))

    def _release(self) -> list[Frame]:
        """Every held frame: the lines before the last ``tail_lines`` as catch-up, the rest
        (at most ``tail_bytes``: :meth:`_hold` saw to it) visible."""
        out: list[Frame] = []
        held = self._held
        while held and self._held_lines - _lines_of(held[0]) >= self.tail_lines:
            self._pop(out)  # whole frames before the tail (no join of the whole history)
        excess = self._held_lines - self.tail_lines  # lines of the first frame before the tail
        if excess > 0:
            first = held[0]
            at = _line_start(first.data, excess)
            held[0] = Frame(first.data[at:], first.start + at, False)
            out.append(self._frame(first.data[:at], False))
        run: list[bytes] = []  # consecutive whole-line frames are framed at once
        for frame in held:
            if not frame.single:
                run.append(frame.data)
                continue
            if run:
                out.append(self._frame(b"".join(run), True))
                run = []
            out.append(self._frame(frame.data, True, single=True, cut=frame.cut))
        if run:
            out.append(self._frame(b"".join(run), True))
        held.clear()
        self._held_lines = self._held_bytes = 0
        return out


def _line_start(data: bytes, n: int) -> int:
    """Where line ``n`` (0-based) of the complete lines ``data`` starts (searched from the
    nearer end)."""
    total = data.count(b"\n")
    if n <= total - n:
        at = 0
        for _ in range(n):
            at = data.index(b"\n", at) + 1
        return at
    at = len(data) - 1
    for _ in range(total - n):
        at = data.rindex(b"\n", 0, at)
    return at + 1


def _lines_of(frame: Frame) -> int:
    return 1 if frame.single else frame.data.count(b"\n")


__all__ = ["CUT_MARK", "MAX_LINE_BYTES", "PARSE_CHARS", "SCAN_CHARS", "TAIL_BYTES", "TAIL_LINES",
           "Frame", "LineFramer", "held_to_contract", "is_cut"]
