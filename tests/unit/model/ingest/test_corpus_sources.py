"""The corpus of real engine log excerpts: every excerpt is labelled, cited and not held out.

``tests/fixtures/corpus/<engine>/<id>.log`` are excerpts copied from public SGLang and vLLM
threads, ``labels.json`` says what a reader found in each (phase, crash, acceptance lengths,
throughput, the damage the text carries). These tests check the corpus itself, never a parser's
output: each excerpt has a label and each label an excerpt, each source is a thread of one of
the engines' repositories, no source is a thread of the project's evaluation set, and each label
uses the project's vocabulary with values that can be found in its excerpt.

The evaluation set is stored here only as SHA-256 digests of ``owner/name#number``: enough to
reject a citation, not a list to read. Where the shared list is on disk (a checkout beside the
steering repository's ``shared/``), the digests are also checked to cover every entry of it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from eagle_tui.model.events import Phase
from eagle_tui.model.ingest.crash import KINDS
from tests.support.paths import FIXTURES, REPO

CORPUS = FIXTURES / "corpus"
LABELS = CORPUS / "labels.json"
ENGINES = ("sglang", "vllm")
REPOS = {"sglang": "sgl-project/sglang", "vllm": "vllm-project/vllm"}
MIN_EXCERPTS = 60
MAX_LINES = 200
SOURCE = re.compile(
    r"https://github\.com/(?P<repo>sgl-project/sglang|vllm-project/vllm)/(?:issues|pull)/"
    r"(?P<number>[1-9]\d*)(?:#issuecomment-\d+)?"
)
THREAD = re.compile(r"https://github\.com/([^/\s]+/[^/\s]+)/(?:issues|pull)/(\d+)")
KEYS = {
    "source", "engine", "version", "phase", "crash", "accept_len", "throughput", "shapes", "note",
}
CRASH_KEYS = {"kind", "cause", "cause_line"}
# What the reader says caused the crash, finer than the parser's kinds; "unknown" when the
# excerpt stops before the exception line.
CAUSES = {
    "oom", "nccl", "cuda", "import", "argparse", "port_in_use", "kv_sizing", "assertion",
    "value_error", "killed", "other", "unknown",
}
SHAPES = {
    "access_log", "argparse_usage", "cause_cut", "chained_traceback", "ci_prefix", "colour_escape",
    "colour_literal", "container_prefix", "crlf", "debug_level", "foreign_lines", "glued",
    "hard_wrap", "line_cut", "markdown_mangled", "multi_node", "no_log_prefix", "non_ascii",
    "old_format", "padded_wrap", "process_prefix", "progress_bar", "py313_carets", "python_warning",
    "rank_prefix", "ray_prefix", "shell_trace", "single_line", "spec_stats_v0", "table_paste",
    "traceback_header_cut", "journald_prefix", "tui_frame",
}
HELDOUT_FILE = ("shared", "engines", "HELDOUT-SOURCES.txt")
DIGESTS = CORPUS / "HELDOUT-DIGESTS.txt"
HELDOUT_DIGESTS = frozenset(
    line.strip() for line in DIGESTS.read_text(encoding="utf-8").splitlines()
    if line.strip() and not line.startswith("#")
)


def _labels() -> dict[str, dict[str, Any]]:
    data = json.loads(LABELS.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _excerpts() -> dict[str, Path]:
    return {p.stem: p for engine in ENGINES for p in sorted((CORPUS / engine).glob("*.log"))}


def _digest(repo: str, number: int) -> str:
    return hashlib.sha256(f"{repo.lower()}#{number}".encode()).hexdigest()


def _threads(text: str) -> list[tuple[str, int]]:
    return [(m.group(1), int(m.group(2))) for m in THREAD.finditer(text)]


def _shared_heldout() -> Path | None:
    """The evaluation set's list where a checkout sits below the steering repo's ``shared/``."""
    named = os.environ.get("EAGLE_TUI_HELDOUT_SOURCES")
    if named:
        return Path(named)
    for parent in (REPO, *REPO.parents[:3]):
        candidate = parent.joinpath(*HELDOUT_FILE)
        if candidate.is_file():
            return candidate
    return None


def _numbers(text: str) -> set[float]:
    return {float(m) for m in re.findall(r"(?<![\d.])\d+(?:\.\d+)?(?![\d.])", text)}


def test_the_corpus_has_enough_excerpts() -> None:
    assert len(_excerpts()) >= MIN_EXCERPTS


def test_every_excerpt_has_a_label_and_every_label_an_excerpt() -> None:
    excerpts, labels = _excerpts(), _labels()
    assert sorted(set(excerpts) - set(labels)) == []
    assert sorted(set(labels) - set(excerpts)) == []


def test_excerpts_are_short_text_in_their_engine_folder() -> None:
    labels = _labels()
    for name, path in _excerpts().items():
        raw = path.read_bytes()
        assert raw.strip(), name
        lines = raw.decode("utf-8").split("\n")
        assert len(lines) <= MAX_LINES + 1, name
        assert path.parent.name == labels[name]["engine"], name


def test_every_source_is_a_thread_of_the_engine_repository() -> None:
    for name, label in _labels().items():
        match = SOURCE.fullmatch(label["source"])
        assert match, (name, label["source"])
        assert match.group("repo") == REPOS[label["engine"]], name
        assert name.startswith(f"{label['engine']}-{match.group('number')}-"), name


def test_no_source_is_a_thread_of_the_evaluation_set() -> None:
    cited = [(name, repo, number) for name, label in _labels().items()
             for repo, number in _threads(label["source"])]
    assert cited
    held = [(name, f"{repo}#{number}") for name, repo, number in cited
            if _digest(repo, number) in HELDOUT_DIGESTS]
    assert held == []


def test_the_readme_cites_no_thread_of_the_evaluation_set() -> None:
    text = (CORPUS / "README.md").read_text(encoding="utf-8")
    assert [t for t in _threads(text) if _digest(*t) in HELDOUT_DIGESTS] == []


def test_the_digests_cover_the_shared_evaluation_list() -> None:
    shared = _shared_heldout()
    if shared is None:
        pytest.skip("the steering repository's shared/ is not beside this checkout")
    entries = _threads(shared.read_text(encoding="utf-8"))
    assert entries
    missing = [f"{repo}#{number}" for repo, number in entries
               if _digest(repo, number) not in HELDOUT_DIGESTS]
    assert missing == [], "add their digests to HELDOUT_DIGESTS"
    cited = {(repo.lower(), number) for label in _labels().values()
             for repo, number in _threads(label["source"])}
    assert cited.isdisjoint({(repo.lower(), number) for repo, number in entries})


def test_the_digests_are_well_formed_and_case_blind() -> None:
    assert HELDOUT_DIGESTS and all(re.fullmatch(r"[0-9a-f]{64}", d) for d in HELDOUT_DIGESTS)
    assert _digest("SGL-Project/SGLang", 7) == _digest("sgl-project/sglang", 7)
    assert _threads("https://github.com/vllm-project/vllm/pull/12#issuecomment-3") == [
        ("vllm-project/vllm", 12)]


def test_labels_use_the_project_vocabulary() -> None:
    phases = {p.value for p in Phase}
    for name, label in _labels().items():
        assert set(label) == KEYS, name
        assert label["engine"] in ENGINES, name
        assert isinstance(label["version"], str), name
        assert label["phase"] in phases, (name, label["phase"])
        assert isinstance(label["note"], str) and label["note"].strip(), name
        assert label["shapes"] == sorted(set(label["shapes"]), key=label["shapes"].index), name
        assert set(label["shapes"]) <= SHAPES, (name, set(label["shapes"]) - SHAPES)
        crash = label["crash"]
        if crash is not None:
            assert set(crash) == CRASH_KEYS, name
            assert crash["kind"] in KINDS, (name, crash["kind"])
            assert crash["cause"] in CAUSES, (name, crash["cause"])
            assert crash["cause_line"] is None or isinstance(crash["cause_line"], str), name


def test_label_values_are_read_from_the_excerpt() -> None:
    excerpts = _excerpts()
    for name, label in _labels().items():
        text = excerpts[name].read_text(encoding="utf-8")
        crash = label["crash"]
        if crash is not None and crash["cause_line"] is not None:
            assert crash["cause_line"].strip() and crash["cause_line"] in text, name
        numbers = _numbers(text)
        for key in ("accept_len", "throughput"):
            values = label[key]
            assert isinstance(values, list), (name, key)
            assert all(isinstance(v, (int, float)) and v >= 0 for v in values), (name, key)
            assert set(map(float, values)) <= numbers, (name, key)
        if label["accept_len"]:
            assert all(v >= 1 for v in label["accept_len"]), name


# Every fixture, not only the corpus: a thread is named by its URL, or by a name such as
# ``sglang-issue-4489`` / ``vllm-pr-12`` (a file's name or its README's text).
NAMED_THREAD = re.compile(r"\b(sglang|vllm|specforge)-(issue|pr)-([1-9]\d*)\b", re.IGNORECASE)
NAMED_REPOS = {"sglang": "sgl-project/sglang", "vllm": "vllm-project/vllm",
               "specforge": "sgl-project/SpecForge"}
FIXTURE_TEXT = 4_000_000  # bytes of a fixture read for citations (the largest are a few MB)


def _cited(name: str, text: str) -> list[tuple[str, int]]:
    named = [(NAMED_REPOS[m.group(1).lower()], int(m.group(3)))
             for source in (name, text) for m in NAMED_THREAD.finditer(source)]
    return _threads(text) + named


def test_named_threads_are_read_from_urls_and_names() -> None:
    assert _cited("sglang-issue-4489-capture.log", "") == [("sgl-project/sglang", 4489)]
    assert _cited("x.log", "see vllm-pr-12 and https://github.com/a/b/issues/3") == [
        ("a/b", 3), ("vllm-project/vllm", 12)]


def test_no_fixture_cites_a_thread_of_the_evaluation_set() -> None:
    held: list[tuple[str, str]] = []
    checked = 0
    for path in sorted(FIXTURES.rglob("*")):
        if not path.is_file():
            continue
        with path.open("rb") as f:
            text = f.read(FIXTURE_TEXT).decode("utf-8", "replace")
        rel = str(path.relative_to(FIXTURES))
        cited = _cited(rel, text)
        checked += len(cited)
        held += [(rel, f"{repo}#{n}") for repo, n in cited if _digest(repo, n) in HELDOUT_DIGESTS]
    assert checked > len(_labels())  # the corpus's sources and the fragments' at least
    assert held == []
