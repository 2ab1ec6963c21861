"""A third engine, registered from here alone, is detected and read by the generic log code."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from eagle_tui.model.engines import EngineProfile
from eagle_tui.model.engines.facets.logs import LogFacet, LogPrefix
from eagle_tui.model.events import EngineDetected, Event, LineKind, Phase, PhaseEvent
from eagle_tui.model.ingest import evidence
from eagle_tui.model.ingest.crash import hint_for, kind_of
from eagle_tui.model.ingest.parser import LogParser
from tests.support.toy_engine import registered


class ToyParser:
    def parse(self, msg: str, lineno: int, time: str | None,
              prefixed: bool) -> tuple[list[Event], LineKind | None]:
        if "toy is up" in msg:
            return [PhaseEvent(Phase.READY, lineno, time, msg)], LineKind.MILESTONE
        return [], None

    def line_cut(self) -> None:
        pass


def _hint(kind: str, phase: Phase, msg: str, mine: bool) -> str | None:
    return "Give the toy more RAM." if kind == "cuda_oom" and mine else None


TOY = EngineProfile(
    name="toy", label="Toy", default_port=1234,
    logs=LogFacet(
        text_markers=("Toy server version",),
        prefix=LogPrefix(re.compile(r"<toy (\d\d:\d\d:\d\d)> "), "<", time=1),
        traceback_path=re.compile(r"/toyengine/"),
        traceback_marker="toyengine/",
        parser=ToyParser,
        crash_hint=_hint,
        dead=re.compile(r"toy core vanished"),
    ),
)


@pytest.fixture
def toy() -> Iterator[EngineProfile]:
    with registered(TOY) as profile:
        yield profile


def test_its_prefix_names_it_and_its_parser_reads_its_lines(toy: EngineProfile) -> None:
    p = LogParser()
    events = p.feed_line("<toy 10:00:00> toy is up")
    assert p.engine == "toy"
    assert any(isinstance(e, EngineDetected) and e.engine == "toy" for e in events)
    phases = [e for e in events if isinstance(e, PhaseEvent)]
    assert phases and phases[0].phase is Phase.READY and phases[0].time == "10:00:00"


def test_its_text_marker_names_it(toy: EngineProfile) -> None:
    p = LogParser()
    p.feed_line("Toy server version 1.0")
    assert p.engine == "toy"


def test_its_rules_are_asked(toy: EngineProfile) -> None:
    assert evidence.engine_in_line('  File "/opt/toyengine/core.py", line 3') == (
        "toy", "a traceback through toyengine/")
    assert hint_for("cuda_oom", "toy") == "Give the toy more RAM."
    assert kind_of("toy core vanished") == "engine_dead"


def test_forgotten_it_is_not_detected() -> None:
    p = LogParser()
    p.feed_line("<toy 10:00:00> toy is up")
    assert p.engine == "unknown"
    assert kind_of("toy core vanished") is None
