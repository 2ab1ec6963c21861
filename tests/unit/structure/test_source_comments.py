"""Comments say why, not what was measured when: the notebook lives in docs/performance.md.

Four things fail here, each with its file and line: an issue number in a comment or docstring
(the tracker is not the code's history), a measured figure (a timing, size, share or speed-up
stated as observed: it goes stale silently; docs/performance.md keeps it with the command and
the date), a package module's docstring longer than :data:`DOCSTRING_LINES` lines (design
prose belongs in docs/architecture.md; a benchmark's docstring is its ``--help``), and a
reference to ``MEASURED.md`` or ``FORMATS.md``, notes outside this repository.

A number with a unit is fine where it states a setting or a fact of a format ("polls every 2 s",
"a 2 GiB file"); it counts as measured only beside a sign of observation: an approximation
(``~``, ``≈``, "about"), a comparison ("3x faster", "10 times cheaper"), a sub-millisecond
unit, a cost verb ("costs 4 ms", "took 92 s"), "N s of CPU", or a note of a run ("(measured …",
"measured: …", "as measured").
Quoted text (````…````, ``"…"``) is an example of output and is not read.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator

import pytest

from tests.support.paths import REPO

ROOTS = ("eagle_tui", "benchmarks")
DOCSTRING_LINES = 15

PENDING: frozenset[str] = frozenset()  # (paths whose comments are not checked yet: none)

_NUM = r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?:\s*[-–]\s*\d[\d,]*(?:\.\d+)?)?"
_UNIT = r"(?:ns|µs|μs|us|ms|s|secs?|seconds?|minutes?|[kKMG]B|[KMG]iB|%|[x×])(?![\w])"
_FIGURE = rf"{_NUM}\s*{_UNIT}"
_RATIO_WORDS = r"(?:faster|slower|cheaper|dearer|quicker|less|more|fewer|smaller|larger|bigger)"

ISSUE = re.compile(
    r"\bissues?\s*#?\d+"  # "issue 17", "issues 12 and 15"
    r"|(?<![&\w])#\d{1,4}(?![\w])"  # "#21" (an HTML entity or a colour has more after it)
    r"|\(i\d{1,3}\)",  # "(i22)"
    re.IGNORECASE,
)
MEASURED = re.compile(
    rf"[~≈]\s*{_FIGURE}"  # ~450 ns, ≈1.9×
    rf"|\b(?:about|around|roughly|nearly|almost)\s+{_FIGURE}"
    rf"|{_NUM}\s*(?:[x×]|times)\s+{_RATIO_WORDS}\b"  # 2x faster, 10 times cheaper
    rf"|{_NUM}\s*(?:ns|µs|μs|us)(?![\w])"  # nothing is configured below a millisecond
    rf"|\b(?:costs?|costing|took|takes|spent|spends)\b[^.;:()]{{0,30}}?{_FIGURE}"
    rf"|{_NUM}\s*(?:ms|s|seconds?)\s+of\s+(?:CPU|work|parsing|wall)\b"  # 92 s of CPU
    # a note of a run, not the verb
    r"|\(measured\b(?!\.md)|\bas\s+measured\b|(?:^|[.;,]\s*)measured\s*:",
    re.IGNORECASE,
)
NOTES = re.compile(r"\b(?:MEASURED|FORMATS)\.md\b")
_QUOTED = re.compile(r"``.*?``|`[^`]*`|\"[^\"\n]*\"")


def _pending(rel: str) -> bool:
    return any(rel.startswith(p) for p in PENDING)


def _files() -> Iterator[tuple[str, str]]:
    for root in ROOTS:
        for path in sorted((REPO / root).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if not _pending(rel):
                yield rel, path.read_text(encoding="utf-8")


def _prose(source: str) -> Iterator[tuple[int, str]]:
    """(line, text) of every comment and every docstring line of ``source``."""
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string.lstrip("#")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            first = body[0] if body else None
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                for i, line in enumerate(first.value.value.splitlines()):
                    yield first.value.lineno + i, line


def offences(rel: str, source: str) -> list[str]:
    """Every breach of the rules above in one file, as ``path:line: what: text``."""
    found = []
    for line, text in _prose(source):
        plain = _QUOTED.sub("", text)
        for what, pattern, subject in (
            ("issue number", ISSUE, plain),
            ("measured figure", MEASURED, plain),
            ("notes outside the repository", NOTES, text),
        ):
            hit = pattern.search(subject)
            if hit:
                found.append(f"{rel}:{line}: {what}: {hit.group(0)!r} in {text.strip()!r}")
    doc = ast.get_docstring(ast.parse(source), clean=True)
    # a benchmark's docstring is its --help text, which may take the room it needs
    if rel.startswith("benchmarks/"):
        doc = None
    if doc is not None and len(doc.splitlines()) > DOCSTRING_LINES:
        found.append(f"{rel}:1: module docstring of {len(doc.splitlines())} lines")
    return sorted(found)


def test_source_comments_keep_to_the_rules() -> None:
    found = [o for rel, source in _files() for o in offences(rel, source)]
    assert found == [], "\n".join(found)


def test_docs_cite_only_what_the_repository_has() -> None:
    found = [
        f"{path.name}:{n}: {line.strip()}"
        for path in sorted((REPO / "docs").glob("*.md"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if NOTES.search(line)
    ]
    assert found == [], "\n".join(found)


def test_pending_paths_exist() -> None:
    # a stale entry would silently widen the exemption once a file is renamed
    for p in PENDING:
        assert list(REPO.glob(p + "*")), p


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("# checked in issue 17", "issue number"),
        ("# see #21", "issue number"),
        ("# the cap (i22)", "issue number"),
        ("# one pread costs ~450 ns", "measured figure"),
        ("# the C pass is 2x faster", "measured figure"),
        ("# a sample: 17 µs", "measured figure"),
        ("# a scrape cost 17 s", "measured figure"),
        ("# once 92 s of CPU", "measured figure"),
        ("# (measured in tmux at 50k lines/s)", "measured figure"),
        ("# vLLM refuses, as measured", "measured figure"),
        ("# (import is about 0.3 s)", "measured figure"),
        ("# recipe in MEASURED.md", "notes outside the repository"),
    ],
)
def test_an_offence_is_named(text: str, what: str) -> None:
    assert [what in o for o in offences("m.py", f"x = 1  {text}\n")] == [True]


@pytest.mark.parametrize(
    "text",
    [
        "# noqa: E501",
        "# type: ignore[attr-defined]",
        "# colour #1e1e1e and &#39;",
        "# poll every 2 s, then every 250 ms",
        "# a 2 GiB file is read 1 MiB at a time",
        "# alert at 90 %",
        '# shown as "IDLE 45 s" and ``~3 ms``',
        "# 4x the interval",
        "# what the server itself measured; p99 µs per read",
        "# What ``bench`` measured: one run's figures",
        "# target: at most 10 % of a core",
    ],
)
def test_settings_and_examples_pass(text: str) -> None:
    assert offences("m.py", f"x = 1  {text}\n") == []


def test_a_long_module_docstring_is_named() -> None:
    short = '"""' + "line\n" * DOCSTRING_LINES + '"""\n'
    long = '"""' + "line\n" * (DOCSTRING_LINES + 1) + '"""\n'
    assert offences("m.py", short) == []
    assert offences("m.py", long) == [f"m.py:1: module docstring of {DOCSTRING_LINES + 1} lines"]


def test_a_docstring_figure_is_named_at_its_line() -> None:
    source = 'def f() -> None:\n    """Read it.\n\n    Each read took 3 ms.\n    """\n'
    want = "m.py:4: measured figure: 'took 3 ms' in 'Each read took 3 ms.'"
    assert offences("m.py", source) == [want]
