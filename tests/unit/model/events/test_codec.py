"""Event ↔ JSON codec: every event type round-trips, bad input is a clear CodecError."""

from __future__ import annotations

import dataclasses
import enum
import json
import types
import typing
from typing import Any, Literal

import pytest

from eagle_tui.model.events import (
    EVENT_TYPES,
    CrashEvent,
    Event,
    GpuInfo,
    GpuProcess,
    GpuSample,
    HealthSample,
    LineKind,
    LogLine,
    Phase,
    PhaseEvent,
    ServerInfo,
    SpecConfig,
    SpecStats,
    codec,
)
from eagle_tui.model.events.codec import CodecError, dumps, from_dict, is_header, loads, to_dict

EVENT_CLASSES = sorted(set(typing.get_args(Event)), key=lambda c: c.__name__)


def _sample(hint: Any, salt: int) -> Any:
    """A non-default value of type ``hint`` (so a field the codec drops would be noticed)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union or origin is types.UnionType:
        return _sample(next(a for a in args if a is not type(None)), salt)
    if origin is Literal:
        return args[salt % len(args)]
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return (_sample(args[0], salt), _sample(args[0], salt + 1))
        return tuple(_sample(a, salt + i) for i, a in enumerate(args))
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        members = list(hint)
        return members[salt % len(members)]
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _instance(hint, salt)
    if hint is bool:
        return True
    if hint is int:
        return 7 + salt
    if hint is float:
        return 1.25 + salt
    if hint is str:
        return f"s{salt} ünïcode [link=x] \\ \"q\""
    raise AssertionError(f"no sample for {hint!r}")


def _instance(cls: type, salt: int = 0) -> Any:
    hints = typing.get_type_hints(cls)
    return cls(**{f.name: _sample(hints[f.name], salt + i)
                  for i, f in enumerate(dataclasses.fields(cls))})


@pytest.mark.parametrize("cls", EVENT_CLASSES, ids=lambda c: c.__name__)
def test_every_event_type_round_trips_with_non_default_values(cls: type) -> None:
    ev = _instance(cls, 3)
    line = dumps(ev)
    assert "\n" not in line
    back = loads(line)
    assert back == ev
    assert type(back) is cls


def test_every_event_class_is_registered() -> None:
    assert {c.__name__ for c in EVENT_CLASSES} <= set(EVENT_TYPES)


def test_nested_dataclasses_enums_and_tuples_decode_to_their_types() -> None:
    ev = GpuSample(
        5.0, "ok",
        (GpuInfo(0, "H200", mem_used=1 << 30, processes=(GpuProcess(12, "python", 3),)),),
        backend="nvml",
    )
    back = loads(dumps(ev))
    assert isinstance(back, GpuSample)
    assert isinstance(back.gpus, tuple) and isinstance(back.gpus[0], GpuInfo)
    assert isinstance(back.gpus[0].processes[0], GpuProcess)
    info = loads(dumps(ServerInfo(1.0, SpecConfig("EAGLE3", num_steps=3),
                                  memory_gb=(("kv", 2.5),))))
    assert isinstance(info, ServerInfo) and isinstance(info.spec, SpecConfig)
    assert info.memory_gb == (("kv", 2.5),)
    phase = loads(dumps(PhaseEvent(Phase.CUDA_GRAPH, 12)))
    assert isinstance(phase, PhaseEvent) and phase.phase is Phase.CUDA_GRAPH
    line = loads(dumps(LogLine(3, "x", LineKind.TRACEBACK)))
    assert isinstance(line, LogLine) and line.kind is LineKind.TRACEBACK


def test_ints_decode_as_floats_where_a_float_is_declared() -> None:
    ev = from_dict({"type": "HealthSample", "state": "ready", "t": 3, "latency_s": 1})
    assert ev == HealthSample("ready", 3.0, None, 1.0)
    assert isinstance(ev, HealthSample) and isinstance(ev.t, float)


def test_unknown_keys_are_ignored_for_forward_compatibility() -> None:
    ev = from_dict({"type": "CrashEvent", "kind": "cuda_oom", "lineno": 4, "message": "m",
                    "hint": "h", "added_in_a_later_version": [1, 2]})
    assert ev == CrashEvent("cuda_oom", 4, "m", "h")


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        ({"kind": "x"}, 'missing "type"'),
        ({"type": "NoSuchEvent"}, "unknown event type 'NoSuchEvent'"),
        ({"type": "GpuInfo", "index": 0}, "unknown event type 'GpuInfo'"),
        ({"type": "LogLine", "text": "x"}, "LogLine: missing field 'lineno'"),
        ({"type": "LogLine", "lineno": "3", "text": "x"}, "LogLine.lineno: expected an integer"),
        ({"type": "LogLine", "lineno": True, "text": "x"}, "LogLine.lineno: expected an integer"),
        ({"type": "LogLine", "lineno": 1, "text": "x", "kind": "bogus"}, "is not a LineKind"),
        ({"type": "HealthSample", "state": "dancing", "t": 1.0}, "'dancing' is not one of"),
        ({"type": "SpecStats", "lineno": 1, "per_position": "0.5"}, "expected a list"),
        ({"type": "SpecStats", "lineno": 1, "per_position": [0.5, "x"]},
         "SpecStats.per_position[1]: expected a number"),
        ({"type": "ServerInfo", "t": 1.0, "memory_gb": [["kv", 1.0, 3]]}, "expected 2 items"),
        ({"type": "ServerInfo", "t": 1.0, "spec": 5}, "expected an object"),
        ([1, 2], "expected a JSON object"),
    ],
)
def test_bad_input_is_a_codec_error_naming_the_problem(data: object, needle: str) -> None:
    with pytest.raises(CodecError) as err:
        from_dict(data)
    assert needle in str(err.value)


def test_not_json_is_a_codec_error() -> None:
    with pytest.raises(CodecError, match="not valid JSON"):
        loads("{not json")
    with pytest.raises(CodecError, match="not valid JSON"):
        loads(b"\xff\xfe")


def test_to_dict_refuses_non_events() -> None:
    with pytest.raises(CodecError, match="not an event"):
        to_dict(GpuInfo(0))  # type: ignore[arg-type]


def test_header_round_trip_and_version_check() -> None:
    assert is_header(json.loads(codec.header_line()))
    assert not is_header({"type": "Tick", "t": 1.0})
    with pytest.raises(CodecError, match="version 99 is not supported"):
        is_header({"format": codec.RECORD_FORMAT, "version": 99})


def test_special_floats_survive() -> None:
    ev = SpecStats(1, mean_accept_len=float("inf"))
    back = loads(dumps(ev))
    assert isinstance(back, SpecStats) and back.mean_accept_len == float("inf")
