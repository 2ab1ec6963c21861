"""Which lines of a re-read container log were handed out already (pure).

``logs --follow --timestamps`` cannot be resumed at a byte offset: a dropped connection or a
killed CLI is followed by ``logs --since STAMP``, and the stamp alone does not say where to go on.
Through podman's API the stamps are whole seconds, podman's own ``--since`` leaves out lines of
the very stamp it was given, the docker CLI's gives one more, and a burst shares one stamp. So
:class:`ResumeWindow` keeps, for the lines of the last :data:`MARGIN_NS` before the newest stamp
seen, how many of each (stamp, content) pair were handed out; a re-read asks from the window's
start, and each line in it is skipped as long as an equal one of that stamp is still owed. That
holds whatever order the CLI's two streams (stdout, stderr) interleave in on either read.
"""

from __future__ import annotations

import heapq
from collections import Counter

MARGIN_NS = 2_000_000_000  # whole-second stamps and the two streams' skew fit in this
MAX_KEPT = 200_000  # lines in the window at most (a flood): the oldest stamps go first


class ResumeWindow:
    """The recent lines handed out, by stamp and content digest; see the module docstring."""

    __slots__ = ("_owed", "_seen", "floor", "high", "kept", "margin", "max_kept")

    def __init__(self, margin: int = MARGIN_NS, max_kept: int = MAX_KEPT) -> None:
        self.margin = margin
        self.max_kept = max_kept
        self.high: int | None = None  # the newest stamp handed out
        self.floor: int | None = None  # lines older than this were all handed out
        self.kept = 0
        self._seen: dict[int, Counter[int]] = {}  # stamp → content digest → lines handed out
        self._owed: dict[int, Counter[int]] = {}  # the same, still to skip on this re-read

    def since(self) -> int | None:
        """The stamp a re-read starts after (``None``: nothing read yet, read it all): just
        before the window, as podman's ``--since`` leaves out the given stamp's lines."""
        return None if self.floor is None else self.floor - 1

    def reread(self) -> None:
        """A new read starts (at :meth:`since`): every line in the window is owed a skip."""
        self._owed = {k: Counter(c) for k, c in self._seen.items()}

    def accept(self, stamp: int, line: bytes) -> bool:
        """Whether the line (without its stamp) is new; a new line is remembered."""
        if self.floor is not None and stamp < self.floor:
            return False
        digest = hash(line)
        owed = self._owed.get(stamp)
        if owed is not None and owed[digest] > 0:
            owed[digest] -= 1
            return False
        self._seen.setdefault(stamp, Counter())[digest] += 1
        self.kept += 1
        if self.high is None or stamp > self.high:
            self.high = stamp
        if self.floor is None:  # the other stream's first lines may be older
            self.floor = stamp - self.margin
        low = self.high - self.margin
        # pruned by half a margin at a time: not a sort of the window at every new stamp
        if self.floor < low - self.margin // 2 or self.kept > self.max_kept:
            self._prune(low)
        return True

    def _prune(self, low: int) -> None:
        # the floor is the margin's start (a line of the other stream still to come is newer
        # than that), or past the last stamp a flood forced out
        floor = low
        for stamp in sorted(self._seen):
            if stamp >= low and self.kept <= self.max_kept:
                break
            self.kept -= sum(self._seen.pop(stamp).values())
            self._owed.pop(stamp, None)
            floor = max(floor, stamp + 1)
        self.floor = floor




class StampOrder:
    """Lines of two streams put back in stamp order, holding only the last ``margin`` of them:
    a line goes out once a line :data:`MARGIN_NS` newer has come (equal stamps keep the order
    they came in). A report of a container's log reads its stdout and stderr as one log."""

    __slots__ = ("_heap", "_seq", "margin")

    def __init__(self, margin: int = MARGIN_NS) -> None:
        self.margin = margin
        self._heap: list[tuple[int, int, bytes]] = []
        self._seq = 0

    def push(self, stamp: int, line: bytes) -> list[bytes]:
        """Add a line; the lines now old enough to go out, in order."""
        heapq.heappush(self._heap, (stamp, self._seq, line))
        self._seq += 1
        out: list[bytes] = []
        old = stamp - self.margin
        while self._heap and self._heap[0][0] < old:
            out.append(heapq.heappop(self._heap)[2])
        return out

    def flush(self) -> list[bytes]:
        """Every line still held, in order (the end of the log)."""
        out = [item[2] for item in sorted(self._heap)]
        self._heap.clear()
        return out


__all__ = ["MARGIN_NS", "MAX_KEPT", "ResumeWindow", "StampOrder"]
