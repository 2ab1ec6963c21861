"""``@record`` classes behave as ``@dataclass(frozen=True, slots=True)`` ones do."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eagle_tui.model.events import DecodeStats, LogLine, PhaseEvent
from eagle_tui.model.events import Phase as P
from eagle_tui.model.record import Record, is_frozen, record


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


def _pair(spec: list[tuple[str, str]]) -> tuple[type, type]:
    """A frozen slotted dataclass and a record with the same fields: ``spec`` is (name, kind),
    kind ``"req"`` (no default), ``"def"`` (default ``name``) or ``"fac"`` (a list factory)."""
    ns: dict[str, object] = {"__annotations__": {n: "object" for n, _ in spec}}
    for name, kind in spec:
        if kind == "def":
            ns[name] = name
        elif kind == "fac":
            ns[name] = dataclasses.field(default_factory=list)
    name = "Gen_" + "_".join(k for _, k in spec)
    ref = dataclasses.dataclass(frozen=True, slots=True)(type(name, (), dict(ns)))
    rec = record(type(name, (Record,), dict(ns)))
    globals()[name] = rec  # where pickle looks it up
    return ref, rec


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["req", "def", "fac"]), max_size=7), st.data())
def test_generated_records_match_the_frozen_dataclass(kinds: list[str], data: st.DataObject
                                                      ) -> None:
    kinds = sorted(kinds, key=lambda k: k != "req")  # required fields first, as Python wants
    spec = [(f"f{i}", k) for i, k in enumerate(kinds)]
    ref, rec = _pair(spec)
    def shape(cls: type) -> list[tuple[str, object, object]]:
        return [(p.name, p.kind, p.default if k == "def" else p.default is p.empty)
                for p, (_, k) in zip(inspect.signature(cls).parameters.values(), spec,
                                     strict=True)]

    assert shape(rec) == shape(ref)
    given_n = data.draw(st.integers(sum(k == "req" for k in kinds), len(kinds)))
    args = [data.draw(st.integers() | st.text(max_size=3)) for _ in range(given_n)]
    a, b = ref(*args), rec(*args)
    assert repr(b) == repr(a) and b._values() == dataclasses.astuple(a)
    assert b == rec(*args) and hash(b) == hash(rec(*args)) if "fac" not in kinds else True
    for name, kind in spec[given_n:]:  # the defaults: the same value; a factory's, a new one
        assert getattr(b, name) == getattr(a, name)
        if kind == "fac":
            assert getattr(b, name) is not getattr(rec(*args), name)
    assert dataclasses.replace(b) == b and pickle.loads(pickle.dumps(b)) == b
    assert copy.copy(b) == b and copy.deepcopy(b) == b
    for name, _ in spec:
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(b, name, 1)
        with pytest.raises(dataclasses.FrozenInstanceError):
            delattr(b, name)
    with pytest.raises(TypeError):
        rec(*args, *range(len(kinds) - given_n + 1))  # one argument too many
    if given_n and kinds[given_n - 1] == "req":
        with pytest.raises(TypeError):
            rec(*args[:-1])  # a required one missing


def test_init_false_fields_and_post_init() -> None:
    @record
    class Late(Record):
        a: int
        seen: list[int] = dataclasses.field(default_factory=list, init=False)
        tag: str = dataclasses.field(default="t", init=False)

        def __post_init__(self) -> None:
            self.seen.append(self.a)

    x = Late(4)
    assert x.seen == [4] and x.tag == "t" and "seen" not in inspect.signature(Late).parameters
    assert is_frozen(Late) and is_frozen(Ref) and not is_frozen(
        dataclasses.dataclass(type("Loose", (), {"__annotations__": {"a": "int"}})))
