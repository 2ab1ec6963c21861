"""A third engine in one module: the proof that an engine is one profile and nothing else.

``toyllm`` prints ``<toy HH:MM:SS> message`` lines, says ``toy is up`` when it serves and
``toy stats: T tok/s, accept A`` per interval, exports ``toy:running`` and the counters
``toy:tokens`` / ``toy:steps`` on ``/metrics``, is started as ``toyllm serve`` or
``python -m toyllm.server`` with its own flag table, and has one lint rule. Registered from this
module alone (``register(PROFILE)``, or the ``eagle_tui.engines`` entry point a plugin declares),
every consumer uses it: the tests under ``tests/unit/model/engines/`` check that.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from eagle_tui.model.engines import EngineProfile, register, unregister
from eagle_tui.model.engines.facets import FleetFacet, LaunchFacet, LogFacet, MetricsFacet
from eagle_tui.model.engines.facets.fleet import Figure, FleetReading
from eagle_tui.model.engines.facets.logs import LogPrefix
from eagle_tui.model.engines.facets.metrics import Scrape
from eagle_tui.model.events import DecodeStats, Event, LineKind, MetricsSample, Phase, PhaseEvent
from eagle_tui.model.launching.checks import Finding, LintInput, SpecPlan
from eagle_tui.model.launching.flags import FlagSpec, FlagTable, ParsedCommand

_STATS = re.compile(r"toy stats: ([\d.]+) tok/s, accept ([\d.]+)")


class ToyParser:
    """Its milestones and stats lines (one parser per log stream)."""

    def parse(self, msg: str, lineno: int, time: str | None,
              prefixed: bool) -> tuple[list[Event], LineKind | None]:
        if "toy is up" in msg:
            return [PhaseEvent(Phase.READY, lineno, time, msg)], LineKind.MILESTONE
        m = _STATS.search(msg)
        if m is not None:
            return [DecodeStats(lineno, time, float(m.group(1)), float(m.group(2)))], \
                LineKind.STATS
        return [], None

    def line_cut(self) -> None:
        pass


def read_scrape(now: Scrape, base: Scrape, reset: bool) -> MetricsSample:
    dt = now.t - base.t
    tps = accept = None
    if base is not now and dt > 0:
        gen = now.counters["toy:tokens"] - base.counters["toy:tokens"]
        steps = now.counters["toy:steps"] - base.counters["toy:steps"]
        tps, accept = gen / dt, (gen / steps if steps else None)
    running = now.gauges.get("toy:running")
    return MetricsSample(t=now.t, engine=now.engine, gen_tps=tps, accept_len=accept,
                         running=None if running is None else int(running), counter_reset=reset)


def read_fleet(figure: Figure, _positions: object) -> FleetReading:
    tok_s, steps = figure("tok_s"), figure("verify")
    return FleetReading(tok_s, bool(steps), (tok_s or 0.0) / steps if steps else None)


TABLE = FlagTable("toyllm", "1.0", (
    FlagSpec(("--model",), "model", None), FlagSpec(("--port",), "port", None),
    FlagSpec(("--tp",), "tp", None), FlagSpec(("--draft",), "draft", None),
    FlagSpec(("--mem",), "mem", None)))


def read_plan(cmd: ParsedCommand) -> SpecPlan:
    draft = cmd.get("draft")
    return SpecPlan("toy" if draft else None, "--draft", draft=draft)


def needs_tp(c: LintInput) -> list[Finding]:
    return [] if c.cmd.has("tp") else [Finding("warning", "toy-tp", "toyllm wants --tp", "--tp")]


PROFILE = EngineProfile(
    name="toyllm", label="ToyLLM", default_port=9123,
    logs=LogFacet(
        text_markers=("Toy server version",),
        prefix=LogPrefix(re.compile(r"<toy (\d\d:\d\d:\d\d)> "), "<", time=1),
        traceback_marker="toyengine/", traceback_path=re.compile(r"/toyengine/"),
        parser=ToyParser,
    ),
    metrics=MetricsFacet(prefix="toy:", gauges=("toy:running",),
                         counters=("toy:tokens", "toy:steps"), read=read_scrape,
                         window_counters=("toy:tokens", "toy:steps"), gen_counter="toy:tokens"),
    fleet=FleetFacet(markers=("toy:running",), gen_tokens=("toy:tokens_total",),
                     verify=("toy:steps_total",), running=("toy:running",), read=read_fleet),
    launch=LaunchFacet(modules=("toyllm.server",), scripts=("toyllm",), flag_table=TABLE,
                       tp_dest="tp", tp_flag="--tp", mem_dest="mem", mem_flag="--mem",
                       mem_default=0.5, read_plan=read_plan, rules=(needs_tp,)),
)


@contextmanager
def registered(profile: EngineProfile) -> Iterator[EngineProfile]:
    """``profile`` registered for the block, forgotten after it."""
    register(profile)
    try:
        yield profile
    finally:
        unregister(profile.name)


LOG = """<toy 10:00:00> Toy server version 1.0
<toy 10:00:01> loading the toy model
<toy 10:00:05> toy is up on port 9123
<toy 10:00:06> toy stats: 41.5 tok/s, accept 3.20
<toy 10:00:16> toy stats: 45.0 tok/s, accept 3.40
"""
