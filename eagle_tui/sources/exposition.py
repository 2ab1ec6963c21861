"""Prometheus exposition text, reduced before it is parsed: the wanted series, usable values.

``/metrics`` is the server's to write, and ``prometheus_client``'s parser converts every value
with ``float()`` after reading it as an int when it can: a 400-digit value raised
``OverflowError`` and failed every scrape; ``1e999`` became ``inf``. Here each sample line of a
wanted series is checked on its own (a whole, finite number within :data:`MAX_VALUE`, or
``NaN``); a line that is not is dropped and named, so one bad sample costs that sample and
never the scrape.

Work is linear in the text: each line is split a bounded number of times; a sample line over
:data:`MAX_SAMPLE_LINE` characters is skipped and named like a bad value (prometheus-client's
label reading is not linear in one line's length); only ``# TYPE`` comments reach the parser,
rewritten with single spaces.
"""

from __future__ import annotations

from eagle_tui.model.ingest.normalize import sanitize
from eagle_tui.model.numbers import MAX_VALUE, strict_float

MAX_SAMPLE_LINE = 16 << 10  # a vLLM/SGLang sample line is < 1 KB (labels included)


def base_name(name: str) -> str | None:
    """Counter sample name without ``_total``; ``None`` for ``_created`` bookkeeping series."""
    if name.endswith("_created"):
        return None
    return name[: -len("_total")] if name.endswith("_total") else name


def line_name(line: str) -> str:
    """The metric a line is about: a sample's name, or the name a ``# TYPE``/``# HELP`` names."""
    if line.startswith("#"):
        parts = line.split(None, 3)
        return parts[2] if len(parts) > 2 else ""
    end = len(line)
    for sep in ("{", " "):
        i = line.find(sep)
        if 0 <= i < end:
            end = i
    return line[:end]


def _sample_value(line: str) -> tuple[str, str]:
    """A sample line split into its ``name{labels}`` and its value token (a timestamp after
    the value is dropped: eagle-tui stamps scrapes with its own clock)."""
    close = line.rfind("}")
    if close >= 0:
        head, rest = line[: close + 1], line[close + 1:]
    else:
        head, _, rest = line.partition(" ")
    words = rest.split()
    return head, words[0] if words else ""


def _kept_value(token: str) -> bool:
    """A value eagle-tui can use: a whole, finite, plausible number (NaN is "no data yet")."""
    if token == "NaN":
        return True
    value = strict_float(token)
    return value is not None and abs(value) <= MAX_VALUE


def _comment(line: str) -> str | None:
    """A ``# TYPE`` line rewritten with single spaces; ``None`` for ``# HELP`` and any other
    comment (nothing eagle-tui reads, and prometheus-client's reading of their blanks is
    quadratic in them)."""
    parts = line.split(None, 3)
    if len(parts) < 3 or parts[1] != "TYPE":
        return None
    kind = parts[3].split(None, 1)[0][:16] if len(parts) > 3 else "untyped"
    return f"# TYPE {parts[2]} {kind}"


def filter_exposition(text: str, wanted: frozenset[str]) -> tuple[str, tuple[str, ...]]:
    """Only the series eagle-tui reads (a vLLM /metrics is ~640 lines of mostly histograms),
    and the names of the samples skipped because their value cannot be represented.

    Filtering first makes a scrape far cheaper; the parser still sees well-formed exposition
    because each kept family keeps its own ``# TYPE``/``# HELP`` lines. A value that is not a
    whole finite number (``1e999``, 400 digits, ``0x10``) is dropped here, line by line, so one
    bad sample costs that sample, never the scrape (``OverflowError`` failed every scrape).
    """
    keep = []
    skipped: list[str] = []
    for line in text.splitlines():
        name = line_name(line)
        if not (name in wanted or base_name(name) in wanted):
            continue
        if line.startswith("#"):
            if (kept := _comment(line)) is not None:
                keep.append(kept)
            continue
        if len(line) > MAX_SAMPLE_LINE:
            if name not in skipped:
                skipped.append(name)
            continue
        head, token = _sample_value(line)
        if _kept_value(token):
            keep.append(f"{head} {token}")
        elif name not in skipped:
            skipped.append(name)
    return "\n".join(keep) + "\n", tuple(skipped)


def skipped_note(names: tuple[str, ...]) -> str:
    """The note a sample carries for the values it skipped (bounded: a few names)."""
    shown = ", ".join(sanitize(n[:80]) for n in names[:3])
    shown += f" and {len(names) - 3} more" if len(names) > 3 else ""
    return f"{len(names)} value(s) skipped, not representable: {shown}"


__all__ = ["MAX_SAMPLE_LINE", "MAX_VALUE", "base_name", "filter_exposition", "line_name",
           "skipped_note"]
