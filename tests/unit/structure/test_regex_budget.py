"""Every regex that reads log or server text does linear work, whatever the line.

One ``Capturing batches`` line of 40,000 digits once made a progress regex quadratic (``report``
took 19.6 s of CPU, a dashboard froze for ~95 s). This test does not list patterns: it imports
every module that parses text and collects each compiled ``re.Pattern`` it holds (module level,
in module-level dicts/lists/tuples, and class attributes), so a new pattern is covered without
editing the test. Each pattern is run (``search`` and ``finditer``) on adversarial lines of
``N`` and ``8 * N`` characters — long digit / space / letter runs, repeated separators
(``", "``, ``": "``, ``"1, "``), ``[`` / ``(`` nesting, the pattern's own literal words repeated
and as a near-match prefix — and the test fails when the cost grows much faster than the input:
more than :data:`LIMIT` x for 8x the bytes (linear work gives ~8x; a quadratic pattern ~64x).
A ratio of CPU times (``process_time``), never an absolute time, so a slow machine passes.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import time
from collections.abc import Callable, Iterator
from types import ModuleType

import pytest

import eagle_tui

N = 1_000
GROWTH = 8
LIMIT = 20.0  # cost(8N) / cost(N) above this: superlinear (quadratic gives ~64)
SUSPECT = 16.0  # a first quick ratio above this is measured again, carefully
PACKAGES = ("model", "report", "sources", "probe", "headless", "history")
EXTRA_MODULES = ("eagle_tui.ui.highlight", "eagle_tui.ui.safety", "eagle_tui.ui.widgets.logtext",
                 "eagle_tui.ui.widgets.logview", "eagle_tui.sim.sglang_log",
                 "eagle_tui.sim.vllm_log")
# Units repeated to fill a line: what makes a backtracking regex retry at every position.
FILLERS = ("1", " ", ", ", ": ", "a", "[", "(", "1.", "1,", "1, ", "a ", "a: 1, ", "-", "=",
           "'", "\t", "_", "x=", "\\", "/", "%|", "|", ".", "0x", "1e", "#", "<", "a.", "[1, ",
           "(1, ", "A", "Error ", ' File "', "1%", "1/", ":", "a=1 ", "\x1b[", "]", ")", "{",
           "'a': ", "\"", "aB", "a_b.", "1:1:", "--a ", "┬", "\x1b]0;")
PREFIX_FILLERS = ("1", " ", ", ", ": ", "a", "1, ", "[", "(")


def _modules() -> Iterator[ModuleType]:
    root = eagle_tui.__path__
    for name in PACKAGES:
        pkg = importlib.import_module(f"eagle_tui.{name}")
        yield pkg
        for info in pkgutil.walk_packages(pkg.__path__, f"eagle_tui.{name}."):
            yield importlib.import_module(info.name)
    for name in EXTRA_MODULES:
        yield importlib.import_module(name)
    assert root  # (the package is importable from this tree)


def _patterns_in(value: object, depth: int = 0) -> Iterator[re.Pattern[str] | re.Pattern[bytes]]:
    if isinstance(value, re.Pattern):
        yield value
    elif depth < 3 and isinstance(value, dict):
        for v in value.values():
            yield from _patterns_in(v, depth + 1)
    elif depth < 3 and isinstance(value, list | tuple | frozenset | set):
        for v in value:
            yield from _patterns_in(v, depth + 1)


def collect() -> dict[str, re.Pattern[str] | re.Pattern[bytes]]:
    """``"module.NAME" → pattern`` for every compiled pattern the text modules hold."""
    found: dict[str, re.Pattern[str] | re.Pattern[bytes]] = {}
    seen: set[tuple[object, int]] = set()
    for mod in _modules():
        for name, value in vars(mod).items():
            holders = [(name, value)]
            if isinstance(value, type) and value.__module__ == mod.__name__:
                holders += [(f"{name}.{k}", v) for k, v in vars(value).items()]
            for label, v in holders:
                for i, pat in enumerate(_patterns_in(v)):
                    key = (pat.pattern, pat.flags)
                    if key in seen:
                        continue
                    seen.add(key)
                    found[f"{mod.__name__.removeprefix('eagle_tui.')}.{label}"
                          + (f"[{i}]" if i else "")] = pat
    return found


PATTERNS = collect()
_META = re.compile(r"\\[dDsSwWbBAZ]|\(\?[:=!<P][^)]*?|[\\()\[\]{}?*+|^$.]")


def literals(source: str) -> list[str]:
    """The longest literal words of a pattern's source (its near-match prefixes)."""
    words = {w for w in _META.split(source) if len(w.strip()) >= 3}
    return sorted(words, key=len, reverse=True)[:16]


def lines(pat: re.Pattern[str] | re.Pattern[bytes], n: int) -> Iterator[tuple[str, str]]:
    """``(label, line)`` adversarial lines of about ``n`` characters for ``pat``."""
    def fill(unit: str, size: int) -> str:
        return (unit * (size // len(unit) + 1))[:size]

    for unit in FILLERS:
        yield repr(unit), fill(unit, n)
    src = pat.pattern if isinstance(pat.pattern, str) else pat.pattern.decode("latin-1")
    for i, word in enumerate(literals(src)):
        yield f"{word!r}*", fill(word + " ", n)
        yield f"{word!r}1*", fill(word + " 1", n)
        if i >= 5:
            continue
        for unit in PREFIX_FILLERS:
            yield f"{word!r}+{unit!r}", word + fill(unit, n - len(word))


def _runner(pat: re.Pattern[str] | re.Pattern[bytes], line: str) -> Callable[[], object]:
    subject: str | bytes = line + "\n"  # as in a chunk: a line ends with its newline
    if isinstance(pat.pattern, bytes):
        subject = line.encode("utf-8", "surrogateescape")
    search, finditer = pat.search, pat.finditer

    def run() -> object:
        search(subject)  # type: ignore[arg-type]
        return sum(1 for _ in finditer(subject))  # type: ignore[arg-type]
    return run


def cost(run: Callable[[], object], reps: int, tries: int) -> float:
    best = float("inf")
    for _ in range(tries):
        t = time.process_time()
        for _ in range(reps):
            run()
        best = min(best, time.process_time() - t)
    return max(best, 1e-7)


def ratio(pat: re.Pattern[str] | re.Pattern[bytes], small: str, big: str,
          careful: bool) -> float:
    """cost(big) / cost(small): quick, or (``careful``) with enough repetitions for ~10 ms."""
    run_small, run_big = _runner(pat, small), _runner(pat, big)
    if not careful:
        return cost(run_big, 3, 2) / cost(run_small, 3, 2)
    reps = 1
    while cost(run_small, reps, 1) < 0.01 and reps < 1 << 16:
        reps *= 4
    return min(cost(run_big, reps, 2) / cost(run_small, reps, 2) for _ in range(2))


def worst(pat: re.Pattern[str] | re.Pattern[bytes], n: int = N) -> tuple[float, str]:
    """The highest cost ratio of ``pat`` over every adversarial line shape, and its label."""
    big = dict(lines(pat, n * GROWTH))
    found = (0.0, "")
    for label, small in lines(pat, n):
        r = ratio(pat, small, big[label], careful=False)
        if r > SUSPECT:
            r = ratio(pat, small, big[label], careful=True)
            if r > LIMIT:
                return r, label
        found = max(found, (r, label))
    return found


def test_every_text_module_is_searched() -> None:
    """The collection finds the patterns that matter (a guard against collecting nothing)."""
    names = set(PATTERNS)
    assert len(PATTERNS) > 80
    for must in ("model.engines.sglang.logs._TQDM", "model.ingest.classify.", "model.ingest.crash.",
                 "model.ingest.parser.", "model.ingest.prefix.", "model.engines.sglang.logrules.",
                 "model.engines.vllm.logrules.", "model.engines.vllm.logs.",
                 "model.ingest.evidence.", "model.ingest.normalize."):
        assert any(n.startswith(must) for n in names), must


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_pattern_cost_grows_linearly(name: str) -> None:
    pat = PATTERNS[name]
    r, label = worst(pat)
    assert r <= LIMIT, (f"{name} = {pat.pattern!r}: {GROWTH}x the input costs {r:.0f}x the CPU "
                        f"on lines of {label} (superlinear: nested or overlapping repeats)")
