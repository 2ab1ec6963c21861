"""The log's bounded line buffer: entries, pruning, rows, filter, search, hosts and first error.

Pure (stdlib only) so that everything the log view *knows* is tested without a terminal; the
view (:class:`~eagle_tui.ui.widgets.logview.LogView`) only scrolls, renders and handles keys.
The buffer lives *beside* the reduced :class:`~eagle_tui.model.state.DashboardState`, not inside
it: it is mutated in place, once per batch, so that a 50k lines/s log never copies a
10,000-line tuple per batch (the state only keeps a short tail, ``recent_lines``).

More in docs/architecture.md, "Module notes", ``model/buffers/logbuffer``.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence

from eagle_tui.model.bench.windows import OWN_TAG, is_own_access
from eagle_tui.model.buffers.limits import DEFAULT_MAX_LINES
from eagle_tui.model.buffers.query import Matcher, QueryCompiler, literal_query
from eagle_tui.model.events import LineKind, LogLine
from eagle_tui.model.record import Record, record

Row = tuple[int, int, int]
Cutter = Callable[[str, int], list[tuple[int, int]]]

# far more than DEFAULT_MAX_LINES of ordinary lines need; it bounds a newline-less file (a
# character of non-ASCII text takes up to 4 bytes, so four times this at most in memory)
DEFAULT_MAX_BYTES = 32 << 20
ENTRY_BYTES = 96  # a LogLine object and its list slot, roughly, counted on top of its text
ERROR_KINDS = frozenset({LineKind.ERROR, LineKind.TRACEBACK})


def is_error_line(line: LogLine) -> bool:
    """The one rule for "an error line": the first one is what ``e`` jumps to."""
    return line.kind in ERROR_KINDS


def _whole(text: str, width: int) -> list[tuple[int, int]]:
    return [(0, len(text))]


class LogHostSet:
    """Which hosts the buffer holds (in order of first sight) and which one is shown.

    On a multi-node run (``--ssh a --ssh b``) every ``LogLine`` carries its ``host`` and the
    hosts' lines arrive interleaved in one buffer. Line numbers restart per host, so the
    stream's line count is the sum of each host's newest line number.
    """

    __slots__ = ("_known", "last_lineno", "seen", "selected")

    def __init__(self) -> None:
        self.seen: list[str] = []
        self._known: set[str] = set()
        self.selected: str | None = None
        self.last_lineno: dict[str, int] = {}

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


@record
class Appended(Record):
    """What one :meth:`LogBuffer.append` did, for the view to scroll by."""

    first_seq: int  # seq of the first new entry
    added_rows: int  # rows added (before pruning)
    removed_rows: int  # rows pruned off the top
    new_host: bool  # a host not seen before: the view's host tags changed


class LogBuffer:
    """Bounded log lines plus the row table, filter, search cursor, hosts and first error."""

    def __init__(self, max_lines: int = DEFAULT_MAX_LINES,
                 max_bytes: int = DEFAULT_MAX_BYTES,
                 compile: QueryCompiler = literal_query) -> None:
        if max_lines < 1:
            raise ValueError("max_lines must be >= 1")
        if max_bytes < 1:
            raise ValueError("max_bytes must be >= 1")
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self.compile = compile  # the user's query → pattern (see model/query.py)
        self.lines: list[LogLine] = []  # oldest first; read-only outside this class
        self.dropped = 0  # absolute seq of lines[0]: lines pruned to stay bounded
        self.skipped = 0  # lines never buffered because one batch exceeded max_lines
        self.bytes = 0  # the buffered size, as counted against max_bytes
        self.special: set[int] = set()  # seqs of separator entries
        self.rows: list[Row] | None = None
        self.hosts = LogHostSet()
        self.filter_text = ""
        self.filter: Matcher | None = None
        self.filter_error = ""  # why the compiler refused filter_text ("" when it did not)
        self.search_text = ""
        self.search: Matcher | None = None
        self.search_error = ""
        self.cursor: int | None = None  # seq of the current search hit / jump target
        self.first_error: int | None = None  # seq of the first error line still buffered
        self.wrap = False
        self.wrap_width = 0
        self.cutter: Cutter = _whole
        self.fold_own = True
        self.own: set[int] = set()  # seqs of eagle-tui's own access lines still buffered

    # ------------------------------------------------------------------ queries
    @property
    def line_count(self) -> int:
        return len(self.lines)

    @property
    def row_count(self) -> int:
        return len(self.rows) if self.rows is not None else len(self.lines)

    @property
    def narrowed(self) -> bool:
        """A filter, a host selection or the fold of our own polls hides some lines."""
        return self.filter is not None or self.hosts.selected is not None or self._folding

    @property
    def _folding(self) -> bool:
        return self.fold_own and bool(self.own)

    @property
    def own_lines(self) -> int:
        """eagle-tui's own access lines in the buffer (folded or not)."""
        return len(self.own)

    @property
    def end_seq(self) -> int:
        """The seq the next entry will get."""
        return self.dropped + len(self.lines)

    def entry(self, seq: int) -> LogLine:
        return self.lines[seq - self.dropped]

    def row(self, y: int) -> Row:
        if self.rows is not None:
            return self.rows[y]
        return (self.dropped + y, 0, len(self.lines[y].text))

    def row_text(self, y: int) -> str:
        seq, start, end = self.row(y)
        return self.entry(seq).text[start:end]

    def row_of_seq(self, seq: int) -> int | None:
        if self.rows is None:
            idx = seq - self.dropped
            return idx if 0 <= idx < len(self.lines) else None
        i = bisect.bisect_left(self.rows, (seq, -1, -1))
        if i < len(self.rows) and self.rows[i][0] == seq:
            return i
        return None

    def visible_seqs(self) -> list[int]:
        """The seqs that have at least one row, in order."""
        if self.rows is None:
            return list(range(self.dropped, self.end_seq))
        seqs: list[int] = []
        for seq, _, _ in self.rows:
            if not seqs or seqs[-1] != seq:
                seqs.append(seq)
        return seqs

    @property
    def cursor_lineno(self) -> int | None:
        if self.cursor is None or self.cursor < self.dropped:
            return None
        return self.entry(self.cursor).lineno

    # ------------------------------------------------------------------ feeding
    def append(self, lines: Sequence[LogLine],
               on_new_host: Callable[[], None] | None = None) -> Appended | None:
        """Append a batch (one call per session batch, never per line); None if empty.

        ``on_new_host`` runs when a host not seen before arrives, before the rows are laid
        out: the view's host-tag column appears and narrows ``wrap_width``.
        """
        if not lines:
            return None
        if len(lines) > self.max_lines:  # skip ahead: they would be pruned unseen anyway
            self.skipped += len(lines) - self.max_lines
            lines = lines[-self.max_lines:]
        return self._extend(lines, False, on_new_host)

    def add_special(self, text: str, host: str = "") -> Appended:
        """A separator entry (its text already inert): shown under any filter, never searched."""
        lineno = self.lines[-1].lineno if self.lines else 0
        self.special.add(self.end_seq)
        return self._extend([LogLine(lineno, text, LineKind.MILESTONE, host)], True, None)

    def _extend(self, new: Sequence[LogLine], special: bool,
                on_new_host: Callable[[], None] | None) -> Appended:
        first_seq = self.end_seq
        rows_before = self.row_count
        self.lines.extend(new)
        self.bytes += sum(len(e.text) for e in new) + ENTRY_BYTES * len(new)
        new_host = not special and self.hosts.note(new)
        fold_starts = False
        if not special:
            for i, ln in enumerate(new):
                if OWN_TAG in ln.text and is_own_access(ln.text):
                    fold_starts = fold_starts or (self.fold_own and not self.own)
                    self.own.add(first_seq + i)
        if self.first_error is None and not special:
            for i, ln in enumerate(new):
                if ln.kind in ERROR_KINDS:
                    self.first_error = first_seq + i
                    break
        if new_host:  # a second host: every row gets a tag, so wrapped rows narrow
            if on_new_host is not None:
                on_new_host()
            self.rebuild_rows()
        elif fold_starts:  # the first own line: the rows table starts here
            self.rebuild_rows()
        elif self.rows is not None:
            self.rows.extend(self._rows_for(first_seq, new))
        added = self.row_count - rows_before
        return Appended(first_seq, added, self._prune(), new_host)

    def _prune(self) -> int:
        """Drop the oldest entries beyond either bound; returns the rows removed."""
        lines = self.lines
        n = max(0, len(lines) - self.max_lines)
        freed = sum(len(e.text) for e in lines[:n]) + ENTRY_BYTES * n
        while self.bytes - freed > self.max_bytes and n < len(lines) - 1:
            freed += len(lines[n].text) + ENTRY_BYTES
            n += 1
        if n <= 0:
            return 0
        del lines[:n]
        self.bytes -= freed
        self.dropped += n
        self.special = {s for s in self.special if s >= self.dropped}
        if self.own:
            self.own = {s for s in self.own if s >= self.dropped}
        if self.first_error is not None and self.first_error < self.dropped:
            self.first_error = None
        if self.cursor is not None and self.cursor < self.dropped:
            self.cursor = None
        if self.rows is None:
            return n
        cut = bisect.bisect_left(self.rows, (self.dropped, -1, -1))
        del self.rows[:cut]
        return cut

    # ------------------------------------------------------------------ rows
    def _rows_for(self, first_seq: int, entries: Sequence[LogLine]) -> list[Row]:
        rows: list[Row] = []
        width, cut = self.wrap_width, self.cutter
        flt = self.filter
        hosts = self.hosts if self.hosts.selected is not None else None
        own = self.own if self.fold_own else None
        for i, e in enumerate(entries):
            seq = first_seq + i
            if own and seq in own:
                continue
            if hosts is not None and not hosts.keeps(e, seq in self.special):
                continue
            if flt is not None and seq not in self.special and flt.search(e.text) is None:
                continue
            if self.wrap:
                rows.extend((seq, a, b) for a, b in cut(e.text, width))
            else:
                rows.append((seq, 0, len(e.text)))
        return rows

    def rebuild_rows(self) -> None:
        if (self.filter is None and not self.wrap and self.hosts.selected is None
                and not self._folding):
            self.rows = None
        else:
            self.rows = []
            self.rows = self._rows_for(self.dropped, self.lines)

    def set_wrap(self, wrap: bool, width: int, cutter: Cutter | None = None) -> None:
        self.wrap = wrap
        self.wrap_width = width
        if cutter is not None:
            self.cutter = cutter
        self.rebuild_rows()

    # ------------------------------------------------------------------ filter, search, hosts
    def set_filter(self, query: str) -> bool:
        """Show only lines matching ``query`` (as ``compile`` makes it); "" shows all.
        Returns False (and does nothing) for the query already set."""
        if query == self.filter_text:
            return False
        self.filter_text = query
        self.filter, self.filter_error = self._compiled(query)
        self.rebuild_rows()
        return True

    def set_fold_own(self, fold: bool) -> bool:
        """Fold (hide) or show eagle-tui's own access lines; False if nothing changed."""
        if fold == self.fold_own:
            return False
        self.fold_own = fold
        self.rebuild_rows()
        return True

    def set_search(self, query: str) -> bool:
        if query == self.search_text:
            return False
        self.search_text = query
        self.search, self.search_error = self._compiled(query)
        return True

    def _compiled(self, query: str) -> tuple[Matcher | None, str]:
        """A refused query matches nothing and hides nothing; the box shows its reason."""
        try:
            return self.compile(query), ""
        except ValueError as exc:
            return None, str(exc) or "not a pattern"

    def select_host(self, host: str | None) -> None:
        """Show only ``host``'s lines (one of ``hosts.seen``); None shows every host. The caller
        re-lays out the rows (:meth:`rebuild_rows`) once its tag column is known."""
        self.hosts.select(host)

    def find(self, forward: bool, origin: int) -> tuple[int | None, bool]:
        """The next (previous) visible, non-separator entry after (before) seq ``origin`` that
        matches the search (else the filter) query: ``(seq, wrapped)``, ``(None, False)``."""
        pattern = self.search or self.filter
        if pattern is None or not self.lines:
            return None, False
        seqs = self.visible_seqs()
        if not seqs:
            return None, False
        pos = bisect.bisect_right(seqs, origin) if forward else bisect.bisect_left(seqs, origin) - 1
        for step in range(len(seqs)):
            idx = (pos + step) if forward else (pos - step)
            wrapped = idx >= len(seqs) or idx < 0
            seq = seqs[idx % len(seqs)]
            if seq in self.special:
                continue
            if pattern.search(self.entry(seq).text):
                return seq, wrapped
        return None, False

    def seq_of_lineno(self, lineno: int) -> int | None:
        """The newest buffered line with this stream line number. Each host numbers its own
        lines: the shown host's line is preferred, then any host's."""
        for host in dict.fromkeys((self.hosts.selected, None)):
            for i in range(len(self.lines) - 1, -1, -1):
                e, seq = self.lines[i], self.dropped + i
                if e.lineno == lineno and seq not in self.special and host in (None, e.host):
                    return seq
        return None


__all__ = ["DEFAULT_MAX_BYTES", "DEFAULT_MAX_LINES", "ENTRY_BYTES", "ERROR_KINDS", "Appended",
           "Cutter", "LogBuffer", "LogHostSet", "Row", "is_error_line"]
