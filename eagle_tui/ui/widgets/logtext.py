"""The log view's pure helpers: queries, wrapping, its status record and the hosts of its lines.

Kept apart from :mod:`eagle_tui.ui.widgets.logview` so that they are tested without a terminal
and so that the widget module stays about scrolling and rendering.

Hosts: on a multi-node run (``--ssh a --ssh b``) every ``LogLine`` carries its ``host`` and the
hosts' lines arrive interleaved in one buffer. :class:`LogHosts` remembers which hosts the buffer
has seen, which one the user picked (``None``: all), and the short tag each line gets while all
hosts are shown — without a tag, two ranks' identical lines could not be told apart. Line numbers
restart per host, so the stream's line count is the sum of each host's newest line number.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.cells import cell_len, get_character_cell_size

from eagle_tui.model.events import LogLine
from eagle_tui.ui.format import truncate
from eagle_tui.ui.safety import inert

TAG_CHARS = 12  # a host tag longer than this is cut; the status line names the host in full
_DEST = re.compile(r"^(?:ssh://)?(?:[^@/]*@)?(\[[^\]]*\]|[^:]*)(?::\d+)?$")


def compile_query(query: str) -> re.Pattern[str] | None:
    """A filter/search pattern: a regex when valid, else the literal text; smart case."""
    if not query:
        return None
    flags = 0 if any(c.isupper() for c in query) else re.IGNORECASE
    try:
        return re.compile(query, flags)
    except re.error:
        return re.compile(re.escape(query), flags)


def wrap_cuts(text: str, width: int) -> list[tuple[int, int]]:
    """Character ranges of ``text`` that each fit ``width`` cells (hard wrap, wide-char aware)."""
    if width <= 0 or not text:
        return [(0, len(text))]
    if text.isascii():
        return [(i, min(i + width, len(text))) for i in range(0, len(text), width)]
    cuts, start, used = [], 0, 0
    for i, ch in enumerate(text):
        w = get_character_cell_size(ch)
        if used + w > width and i > start:
            cuts.append((start, i))
            start, used = i, 0
        used += w
    cuts.append((start, len(text)))
    return cuts


class QueryLine:
    """The text of the filter/search box and its cursor: a one-line editor without a widget.

    The log pane draws the box in its status row and feeds it the keys while it is open (see
    :class:`~eagle_tui.ui.widgets.logpane.LogPane`): a real ``Input`` would need the focus, and
    moving the focus restyled the whole log pane and repainted every row of the log, which
    made ``/`` and ``Esc`` several times slower than a scroll key. Only printable text gets in,
    so a pasted control character can never reach the terminal or the pattern.

    A box opened on an existing query has it all *selected*, as ``Input`` does on focus: typing
    replaces it, Backspace clears it, Enter keeps it, and a cursor key starts editing it.
    """

    __slots__ = ("cursor", "selected", "text")

    def __init__(self, text: str = "") -> None:
        self.text = ""
        self.cursor = 0
        self.selected = False
        self.set(text)

    def set(self, text: str, *, select: bool = False) -> None:
        """Replace the text (printable characters only); the cursor goes to its end."""
        self.text = "".join(c for c in text if c.isprintable())
        self.cursor = len(self.text)
        self.selected = select and bool(self.text)

    def _take_selection(self) -> bool:
        """Delete the selected text (all of it); True if there was some."""
        if not self.selected:
            return False
        self.selected = False
        self.text, self.cursor = "", 0
        return True

    def insert(self, text: str) -> bool:
        """Insert at the cursor: the first line of ``text``, printable characters only."""
        lines = text.splitlines()
        clean = "".join(c for c in (lines[0] if lines else "") if c.isprintable())
        if not clean:
            return False
        self._take_selection()
        self.text = self.text[: self.cursor] + clean + self.text[self.cursor :]
        self.cursor += len(clean)
        return True

    def backspace(self) -> bool:
        if self._take_selection():
            return True
        if not self.cursor:
            return False
        self.text = self.text[: self.cursor - 1] + self.text[self.cursor :]
        self.cursor -= 1
        return True

    def delete(self) -> bool:
        if self._take_selection():
            return True
        if self.cursor >= len(self.text):
            return False
        self.text = self.text[: self.cursor] + self.text[self.cursor + 1 :]
        return True

    def delete_to_start(self) -> bool:
        """``ctrl+u``, as in a shell: everything before the cursor."""
        self.selected = False
        if not self.cursor:
            return False
        self.text = self.text[self.cursor :]
        self.cursor = 0
        return True

    def delete_to_end(self) -> bool:
        """``ctrl+k``: everything from the cursor on."""
        self.selected = False
        if self.cursor >= len(self.text):
            return False
        self.text = self.text[: self.cursor]
        return True

    def delete_word(self) -> bool:
        """``ctrl+w``: the word before the cursor (and the spaces between it and the cursor)."""
        self.selected = False
        start = len(self.text[: self.cursor].rstrip(" "))
        while start and self.text[start - 1] != " ":
            start -= 1
        if start == self.cursor:
            return False
        self.text = self.text[:start] + self.text[self.cursor :]
        self.cursor = start
        return True

    def move(self, position: int) -> bool:
        """Put the cursor at ``position`` (clamped) and end the selection; True if either
        changed."""
        position = max(0, min(position, len(self.text)))
        changed = position != self.cursor or self.selected
        self.cursor = position
        self.selected = False
        return changed


@dataclass(frozen=True, slots=True)
class LogStatus:
    """What the pane's status line shows about the view."""

    follow: bool
    unseen: int
    total: int
    shown: int
    filter: str
    search: str
    wrap: bool
    dropped: int  # lines this view received and pruned (or skipped) to stay bounded
    stream: int  # the stream's line number of the newest line (lines the source has seen)
    host: str | None = None  # the one host shown, None for all
    hosts: int = 0  # distinct hosts in the log (0 or 1: not a multi-node run)


def write_lines(path: Path, lines: Sequence[LogLine], *, with_hosts: bool = False) -> int:
    """Save ``lines`` as UTF-8 text; ``with_hosts`` keeps a multi-node log's ``host: `` prefix
    (its lines alone could not be told apart). Returns the number of lines written."""
    with path.open("w", encoding="utf-8") as fh:
        for e in lines:
            if with_hosts and e.host:
                fh.write(f"{e.host}: ")
            fh.write(e.text)
            fh.write("\n")
    return len(lines)


def short_host(host: str) -> str:
    """``alice@gpu-box:2222`` → ``gpu-box``: the part of an ``--ssh`` DEST that names the host."""
    m = _DEST.match(host)
    return m.group(1) if m and m.group(1) else host


class LogHosts:
    """Which hosts the buffer holds (in order of first sight) and which one is shown."""

    __slots__ = ("_known", "last_lineno", "seen", "selected", "tags", "width")

    def __init__(self) -> None:
        self.seen: list[str] = []
        self._known: set[str] = set()
        self.selected: str | None = None
        self.last_lineno: dict[str, int] = {}
        self.tags: dict[str, str] = {}
        self.width = 0  # cells of the tag column; 0 while no tag is drawn

    def note(self, lines: Sequence[LogLine]) -> bool:
        """Take in a batch's hosts and line numbers; True when a new host appeared."""
        hosts = {ln.host for ln in lines}
        if len(hosts) == 1:  # the common case: one set lookup per batch, not per line
            self.last_lineno[lines[-1].host] = lines[-1].lineno
        else:
            for ln in lines:
                self.last_lineno[ln.host] = ln.lineno
        new = [h for h in hosts - self._known if h]
        self._known |= hosts
        if not new:
            return False
        self.seen.extend(sorted(new, key=lambda h: next(
            i for i, ln in enumerate(lines) if ln.host == h)))
        self._retag()
        return True

    @property
    def stream(self) -> int:
        return sum(self.last_lineno.values())

    @property
    def multi(self) -> bool:
        return len(self.seen) > 1

    @property
    def label(self) -> str:
        return "all hosts" if self.selected is None else self.selected

    def select(self, host: str | None) -> None:
        self.selected = host if host in self.seen else None
        self._retag()

    def following(self) -> str | None:
        """The selection after this one: all hosts → first host → ... → last → all hosts."""
        if self.selected is None:
            return self.seen[0] if self.seen else None
        i = self.seen.index(self.selected) + 1
        return self.seen[i] if i < len(self.seen) else None

    def keeps(self, line: LogLine, special: bool) -> bool:
        """Shown under the current selection? A marker of no host shows under every one."""
        sel = self.selected
        return sel is None or line.host == sel or (special and not line.host)

    def tag(self, host: str, first_row: bool = True) -> str:
        """The padded tag of ``host``; blank on a wrapped line's later rows and for no host."""
        return self.tags.get(host, " " * self.width) if first_row else " " * self.width

    def _retag(self) -> None:
        if self.selected is not None or not self.multi:
            self.tags, self.width = {}, 0
            return
        names = [inert(short_host(h)) for h in self.seen]
        if len(set(names)) < len(names):  # same host on two ports: the full DESTs differ
            names = [inert(h) for h in self.seen]
        cut = [truncate(n, TAG_CHARS) for n in names]
        if len(set(cut)) == len(cut):
            names = cut
        width = max(cell_len(n) for n in names) + 1
        self.tags = {h: n + " " * (width - cell_len(n)) for h, n in zip(self.seen, names,
                                                                        strict=True)}
        self.width = width


__all__ = ["TAG_CHARS", "LogHosts", "LogStatus", "QueryLine", "compile_query", "short_host",
           "wrap_cuts", "write_lines"]
