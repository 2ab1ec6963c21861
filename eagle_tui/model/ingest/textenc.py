"""A log's text encoding, from its first bytes, and its bytes as UTF-8.

eagle-tui's parsers read UTF-8. A log written as UTF-16 or UTF-32 (a Windows redirect, a
PowerShell ``Out-File``) has a NUL byte beside every ASCII character: no pattern matches, and it
read as "unknown, crash: none" with no hint. :func:`sniff` names the encoding from a byte-order
mark (UTF-8, UTF-16 LE/BE, UTF-32 LE/BE) or, without one, from where the NULs of the first
bytes fall (ASCII text in UTF-16/32 has NULs at fixed places in every code unit);
:class:`Transcoder` turns the bytes into UTF-8 a chunk at a time (a code unit split between two
chunks waits for the next one). Plain UTF-8 is ``None``: nothing to do, nothing costs.
Pure: no I/O.
"""

from __future__ import annotations

import codecs

from eagle_tui.model.record import Record, record

SNIFF_BYTES = 64  # what :func:`sniff` looks at (a BOM is at most 4; the NUL pattern wants more)


@record
class Encoding(Record):
    """A log encoding other than plain UTF-8: Python's codec and the name shown to the user."""

    codec: str
    label: str
    bom: int  # bytes of byte-order mark at the start (the codec drops them)
    body: str = ""  # the codec of the bytes after the mark (a read resumed mid-file)

    @property
    def plain(self) -> str:
        return self.body or self.codec


# longest first: UTF-32 LE's mark begins with UTF-16 LE's
_BOMS = (
    (codecs.BOM_UTF32_LE, Encoding("utf-32", "UTF-32 LE", 4, "utf-32-le")),
    (codecs.BOM_UTF32_BE, Encoding("utf-32", "UTF-32 BE", 4, "utf-32-be")),
    (codecs.BOM_UTF8, Encoding("utf-8-sig", "UTF-8 with a byte-order mark", 3, "utf-8")),
    (codecs.BOM_UTF16_LE, Encoding("utf-16", "UTF-16 LE", 2, "utf-16-le")),
    (codecs.BOM_UTF16_BE, Encoding("utf-16", "UTF-16 BE", 2, "utf-16-be")),
)
_NO_BOM = {
    # positions of NULs in each code unit of ASCII text → the encoding
    (4, (1, 2, 3)): Encoding("utf-32-le", "UTF-32 LE", 0),
    (4, (0, 1, 2)): Encoding("utf-32-be", "UTF-32 BE", 0),
    (2, (1,)): Encoding("utf-16-le", "UTF-16 LE", 0),
    (2, (0,)): Encoding("utf-16-be", "UTF-16 BE", 0),
}


def _nul_pattern(head: bytes, width: int) -> tuple[int, ...] | None:
    """The positions (within a ``width``-byte unit) that are NUL in every unit of ``head`` and
    never NUL elsewhere, when ``head`` has at least 4 whole units; else ``None``."""
    units = len(head) // width
    if units < 4:
        return None
    always = tuple(i for i in range(width)
                   if all(head[u * width + i] == 0 for u in range(units)))
    never = all(head[u * width + i] != 0 for u in range(units)
                for i in range(width) if i not in always)
    return always if always and never else None


def sniff(head: bytes) -> Encoding | None:
    """The encoding of a log that begins with ``head`` (its first :data:`SNIFF_BYTES`), or
    ``None`` for UTF-8 without a mark (and for anything else: the parsers read it as it is)."""
    for mark, enc in _BOMS:
        if head.startswith(mark):
            return enc
    if b"\x00" not in head[:SNIFF_BYTES]:
        return None
    head = head[:SNIFF_BYTES]
    for width in (4, 2):
        pattern = _nul_pattern(head, width)
        if pattern is not None and (width, pattern) in _NO_BOM:
            return _NO_BOM[(width, pattern)]
    return None


class Transcoder:
    """Bytes in ``enc``, fed in any pieces, out as UTF-8 (undecodable units as U+FFFD).

    ``mid_file``: the bytes start after the mark (a read resumed at an offset).
    """

    def __init__(self, enc: Encoding, *, mid_file: bool = False) -> None:
        self.encoding = enc
        codec = enc.plain if mid_file else enc.codec
        self._decoder = codecs.getincrementaldecoder(codec)("replace")

    def feed(self, data: bytes) -> bytes:
        return self._decoder.decode(data).encode("utf-8", "surrogatepass")

    def finish(self) -> bytes:
        return self._decoder.decode(b"", final=True).encode("utf-8", "surrogatepass")


def raw_length(utf8: bytes, enc: Encoding) -> int:
    """How many bytes of the log in ``enc`` the decoded ``utf8`` came from (whole characters;
    a unit that did not decode counts as one replacement character)."""
    return len(utf8.decode("utf-8", "surrogatepass").encode(enc.plain, "surrogatepass"))


class RawOffsets:
    """Where, in the log's own bytes, a UTF-8 offset of its decoded text falls.

    The line framer counts offsets in the UTF-8 it is fed; a read resumed after a failure must
    start at the log's byte that follows the last line handed out. The bytes fed and not yet
    accounted are kept (what the framer still holds: at most its tail and partial line) and
    their raw length counted once they are handed out.
    """

    def __init__(self, enc: Encoding, raw: int = 0, utf8: int = 0) -> None:
        self.encoding = enc
        self.raw = raw  # the raw offset of ...
        self.utf8 = utf8  # ... this UTF-8 offset
        self._pending = bytearray()

    def fed(self, data: bytes) -> None:
        self._pending += data

    def advance(self, utf8: int) -> None:
        """The framer has handed out everything before UTF-8 offset ``utf8``."""
        n = utf8 - self.utf8
        if n <= 0:
            return
        self.raw += raw_length(bytes(self._pending[:n]), self.encoding)
        del self._pending[:n]
        self.utf8 = utf8

    def resume(self) -> int:
        """The raw offset to read again from (the framer drops what it held)."""
        self._pending.clear()
        return self.raw


def note(enc: Encoding) -> str:
    """The one line that says a log was decoded (shown beside its figures)."""
    return f"this log is {enc.label}; eagle-tui decoded it to UTF-8"


__all__ = ["SNIFF_BYTES", "Encoding", "RawOffsets", "Transcoder", "note", "raw_length", "sniff"]
