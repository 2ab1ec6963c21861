"""``report --json`` scored against the corpus labels and against damaged clean logs.

The scorer (``tests/support/logscore.py``) counts, per field, the excerpts where the report
agrees with what a reader labelled (phase, crash kind, the crash's cause line, acceptance
lengths, throughputs), and the damaged logs whose report agrees with their clean log's own.
The per-field tables are printed (``pytest -s``). The target is 97 % overall, over all five
fields, on each (docs/performance.md, "Reading logs never seen", has the figures).
"""

from __future__ import annotations

from pathlib import Path

from tests.support.logscore import FIELDS, Score, score_corpus, score_damage

TARGET = 0.97
# the fields the parser reads besides the phase: held to the target on their own too
READ = ("crash", "cause", "accept_len", "throughput")


def _overall(score: Score, fields: tuple[str, ...]) -> float:
    hits = sum(score.hits[f] for f in fields)
    total = sum(score.total[f] for f in fields)
    return hits / total


def _check(score: Score, name: str) -> None:
    print(score.table(name))
    assert set(score.total) == set(FIELDS) and all(score.total.values())
    assert _overall(score, FIELDS) >= TARGET, score.table(name)
    assert _overall(score, READ) >= TARGET, score.table(name)


def test_the_corpus_is_read_as_labelled() -> None:
    _check(score_corpus(), "corpus")


def test_damaged_logs_read_as_their_clean_selves(tmp_path: Path) -> None:
    _check(score_damage(tmp_path), "damage")


def test_the_scorer_counts_misses() -> None:
    score = Score()
    truth = {"phase": "serving", "crash": {"kind": "nccl", "cause_line": "NCCL error: x"},
             "accept_len": [2.5], "throughput": []}
    report = {"phase": "none", "crash": {"kind": "nccl", "line": 1, "message": "NCCL error: x"},
              "accept_len": [2.5], "gen_throughput": [10.0]}
    from tests.support.logscore import compare

    compare(score, "a", report, truth, "RuntimeError: NCCL error: x\n")
    assert score.hits == {"phase": 0, "crash": 1, "cause": 1, "accept_len": 1, "throughput": 0}
    assert score.misses["throughput"] == ["a"]  # a throughput the log does not print: invented
