"""The log view's terminal-side helpers: wrapping, its status record, host tags, saving.

Kept apart from :mod:`eagle_tui.ui.widgets.logview` so that they are tested without a terminal
and so that the widget module stays about scrolling and rendering. What the log *knows* (lines,
rows, filter, search, hosts) is the model's :mod:`eagle_tui.model.buffers.logbuffer`; what is here
needs cell widths (``wrap_cuts``, the host tags) or the file system (``write_lines``).

Hosts: on a multi-node run the hosts' lines arrive interleaved in one buffer. While all hosts
are shown each row gets a short tag (:class:`HostTags`) — without it, two ranks' identical lines
could not be told apart.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.cells import cell_len, get_character_cell_size

from eagle_tui.model.buffers.logbuffer import LogBuffer, LogHostSet
from eagle_tui.model.events import LogLine
from eagle_tui.ui.cellwidth import settle
from eagle_tui.ui.format import truncate
from eagle_tui.ui.safety import inert

TAG_CHARS = 12  # a host tag longer than this is cut; the status line names the host in full
_DEST = re.compile(r"^(?:ssh://)?(?:[^@/]*@)?(\[[^\]]*\]|[^:]*)(?::\d+)?$")


def wrap_cuts(text: str, width: int) -> list[tuple[int, int]]:
    """Character ranges of ``text`` that each fit ``width`` cells (hard wrap, wide-char aware),
    measured as the rows will be drawn (:func:`~eagle_tui.ui.cellwidth.settle`)."""
    if width <= 0 or not text:
        return [(0, len(text))]
    if text.isascii():
        return [(i, min(i + width, len(text))) for i in range(0, len(text), width)]
    cuts, start, used = [], 0, 0
    for i, ch in enumerate(settle(text)):
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
    own: int = 0  # eagle-tui's own poll lines buffered (folded unless ``own_shown``)
    own_shown: bool = False
    # the file part (file-backed scrollback) of a log opened at its end:
    prefix: int | None = None  # lines before the tail's start, once counted
    scrollback: str = ""  # "" (none, or ready), "indexing 45%", "unreadable: why"
    at_line: int | None = None  # the file's line at the top of the view while paused
    file_rows: int = 0  # rows of the file part above the buffer (0 while a filter narrows)
    refused: str = ""  # why the filter (or search) query is refused: it hides and finds nothing


def log_status(b: LogBuffer, follow: bool, unseen: int,
               file_status: tuple[int | None, str, int | None], file_rows: int) -> LogStatus:
    """The status of a view of ``b``; ``file_status`` is its file part's ``(prefix,
    scrollback, at_line)``."""
    prefix, scrollback, at_line = file_status
    return LogStatus(
        follow=follow,
        unseen=unseen,
        total=b.line_count,
        shown=b.row_count if b.narrowed else b.line_count,
        filter=b.filter_text,
        search=b.search_text,
        refused=b.filter_error or b.search_error,
        wrap=b.wrap,
        dropped=b.dropped + b.skipped,
        stream=b.hosts.stream,
        host=b.hosts.selected,
        hosts=len(b.hosts.seen),
        own=b.own_lines,
        own_shown=not b.fold_own,
        prefix=prefix,
        scrollback=scrollback,
        at_line=at_line,
        file_rows=file_rows,
    )


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


class HostTags:
    """The short tag each row gets while a multi-host log shows all hosts (drawn at render time).

    Without a tag two ranks' identical lines could not be told apart; which hosts there are and
    which one is selected is the buffer's (:class:`~eagle_tui.model.buffers.logbuffer.LogHostSet`).
    """

    __slots__ = ("tags", "width")

    def __init__(self) -> None:
        self.tags: dict[str, str] = {}
        self.width = 0  # cells of the tag column; 0 while no tag is drawn

    def tag(self, host: str, first_row: bool = True) -> str:
        """The padded tag of ``host``; blank on a wrapped line's later rows and for no host."""
        return self.tags.get(host, " " * self.width) if first_row else " " * self.width

    def update(self, hosts: LogHostSet) -> None:
        if hosts.selected is not None or not hosts.multi:
            self.tags, self.width = {}, 0
            return
        seen = hosts.seen
        names: list[str] = [inert(short_host(h)) for h in seen]
        if len(set(names)) < len(names):  # same host on two ports: the full DESTs differ
            names = [inert(h) for h in seen]
        cut = [truncate(n, TAG_CHARS) for n in names]
        if len(set(cut)) == len(cut):
            names = cut
        width = max(cell_len(n) for n in names) + 1
        self.tags = {h: n + " " * (width - cell_len(n)) for h, n in zip(seen, names, strict=True)}
        self.width = width


__all__ = ["TAG_CHARS", "HostTags", "LogStatus", "QueryLine", "log_status", "short_host",
           "wrap_cuts", "write_lines"]
