"""Where the report's plain runs break: the common plain lines skipped by a compiled scan.

``parser.split_lines`` finds the lines a plain run must leave out with ``re`` and
``detect.NON_PLAIN_AFTER_NL``, a look-ahead tried at every newline. Most lines of a busy log
start with one of a few exact shapes (``SURE_PLAIN``: the dated stamp without tags, the debug
tag, uvicorn's access line), each a plain start. :data:`CANDIDATE` is RE2's pattern for a newline
whose next line does *not* start with one of them (the complement of their prefix tree, written
out below): RE2 scans for it in linear time, skipping to each newline at ``memchr`` speed, and
``re`` then checks each candidate with the very pattern ``split_lines`` uses, so the lines found
are exactly its own. Where the candidates are mostly plain after all (tags, date-less stamps),
``re`` scans the rest itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import re2

_DIGITS = frozenset(b"0123456789")
Seq = list[frozenset[int]]


def _lit(text: bytes) -> Seq:
    return [frozenset((c,)) for c in text]


_TIME = [_DIGITS] * 2 + _lit(b":") + [_DIGITS] * 2 + _lit(b":") + [_DIGITS] * 2
_DATE = [_DIGITS] * 4 + _lit(b"-") + [_DIGITS] * 2 + _lit(b"-") + [_DIGITS] * 2 + _lit(b" ")
_ACCESS = [*_lit(b"INFO:     "), _DIGITS]
# starts of plain lines (each a case of ``NON_PLAIN_AFTER_NL``'s look-ahead: a stamp is ``[``, a
# digit and 18 or 7 more characters), none a prefix of another, the choices at each step
# disjoint: SGLang's stamp with or without its date, without a tag or with one ``TPn`` tag
SURE_PLAIN: list[Seq] = [_lit(b"[EAGLE3-DEBUG]"), _ACCESS] + [
    _lit(b"[") + date + _TIME + tag + kind
    for date in (_DATE, [])
    for tag in (_lit(b"] "), [*_lit(b" TP"), _DIGITS, *_lit(b"] ")])
    for kind in (_lit(b"Decode batch"), _lit(b"Prefill batch"), _ACCESS, _lit(b"[EAGLE3-DEBUG]"))]
Node = dict[frozenset[int], "Node"]


def _tree(seqs: list[Seq]) -> Node:
    root: Node = {}
    for seq in seqs:
        node = root
        for cls in seq:
            if cls not in node:
                assert all(not (cls & other) for other in node), "overlapping choices"
                node[cls] = {}
            node = node[cls]
    return root


def _class(cls: frozenset[int], negate: bool = False) -> str:
    return "[" + ("^" if negate else "") + "".join(f"\\x{c:02x}" for c in sorted(cls)) + "]"


def _not(node: Node) -> str:
    """A pattern for what does not continue ``node`` into an end (a leaf: a whole start)."""
    alts = [_class(frozenset().union(*node), negate=True)]
    alts += [_class(cls) + _not(child) for cls, child in node.items() if child]
    return "(?:" + "|".join(alts) + ")"


def _compile() -> re2._Regexp:
    options = re2.Options()
    options.encoding = re2.Options.Encoding.LATIN1  # bytes are characters, any byte matches
    return re2.compile(("\\n" + _not(_tree(SURE_PLAIN))).encode(), options)


CANDIDATE = _compile()
MISSES = 16  # candidates found plain before ``re`` scans the rest itself


def special_starts(buf: bytes | bytearray, lo: int, hi: int,
                   special: re.Pattern[bytes]) -> Iterator[int]:
    """The newlines in ``buf[lo:hi]`` where ``special`` matches (with ``hi`` as the end), in
    order: ``m.start()`` of ``special.finditer(buf, lo, hi)``. ``buf[hi]`` must be a newline
    (the scan may read it where ``special`` sees the end: neither continues a plain start)."""
    pos, misses = lo, 0
    while (m := CANDIDATE.search(buf, pos, hi + 1)) is not None:
        p = m.start()
        if p >= hi:
            return
        if special.match(buf, p, hi) is not None:
            yield p
        else:
            misses += 1
            if misses > MISSES:
                yield from (m.start() for m in special.finditer(buf, p + 1, hi))
                return
        pos = p + 1


__all__ = ["CANDIDATE", "MISSES", "SURE_PLAIN", "special_starts"]
