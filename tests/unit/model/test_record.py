"""``@record`` classes behave as ``@dataclass(frozen=True, slots=True)`` ones do."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from eagle_tui.model.events import DecodeStats, LogLine, PhaseEvent
from eagle_tui.model.events import Phase as P
from eagle_tui.model.record import Record, record


@dataclasses.dataclass(frozen=True, slots=True)
class Ref:
    a: int
    b: str = "x"


@record
class Rec(Record):
    a: int
    b: str = "x"


@record
class Other(Record):
    a: int
    b: str = "x"


def test_same_meaning_as_a_frozen_slotted_dataclass() -> None:
    assert Rec(1) == Rec(1, "x") and Rec(1) != Rec(2) and Rec(1) != Rec(1, "y")
    assert Rec(1) != Other(1)  # another class: never equal, as dataclasses
    assert (Rec(1) == 1) is False and Rec(1).__eq__(1) is NotImplemented
    assert hash(Rec(1, "q")) == hash(Rec(1, "q")) and len({Rec(1), Rec(1), Rec(2)}) == 2
    assert repr(Rec(1, "q")) == repr(Ref(1, "q")).replace("Ref(", "Rec(")
    with pytest.raises(dataclasses.FrozenInstanceError):
        Rec(1).a = 2  # type: ignore[misc]
    assert not hasattr(Rec(1), "__dict__")  # slotted
    assert [f.name for f in dataclasses.fields(Rec)] == ["a", "b"]
    assert dataclasses.replace(Rec(1), b="z") == Rec(1, "z")
    assert pickle.loads(pickle.dumps(Rec(3, "p"))) == Rec(3, "p")


def test_events_are_records() -> None:
    line = LogLine(3, "hello")
    assert repr(line) == "LogLine(lineno=3, text='hello', kind=<LineKind.PLAIN: 'plain'>, host='')"
    assert PhaseEvent(P.READY, 1) == PhaseEvent(P.READY, 1) != PhaseEvent(P.READY, 2)
    assert isinstance(DecodeStats(lineno=1), Record)


def test_a_record_must_derive_from_record() -> None:
    with pytest.raises(TypeError, match="must derive from Record"):
        record(type("Bare", (), {"__annotations__": {"a": "int"}}))
