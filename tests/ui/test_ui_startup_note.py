"""The Startup pane's note line: a silent startup's verdict, or what was inferred."""

from __future__ import annotations

from textual.content import Content

from eagle_tui.model.events import (
    DecodeStats,
    LineKind,
    LogLine,
    Phase,
    PhaseEvent,
    ProcessSample,
    Tick,
)
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState
from eagle_tui.ui.widgets.startup import STEPPER_LINES, note_parts, startup_content


def note(state: DashboardState) -> str:
    return Content.assemble(*note_parts(state)).plain


def test_inferred_phase_and_engine_are_said_to_be_inferred() -> None:
    s = reduce(DashboardState(), [
        LogLine(1, '  File "/x/sglang/srt/managers/scheduler.py", line 9, in f',
                LineKind.TRACEBACK),
        DecodeStats(2, None, 90.0, 2.0),
    ])
    assert note(s) == (" ≈ inferred serving from a decode stats line; sglang from a traceback "
                       "through sglang/srt/")
    assert len(startup_content(s, 160).plain.splitlines()) == STEPPER_LINES
    # narrower, the note wraps onto a row more rather than dropping the engine's evidence
    rows = startup_content(s, 80).plain.splitlines()
    assert len(rows) == STEPPER_LINES + 1 and rows[-1].strip() == "sglang/srt/"


def test_a_silent_startup_shows_its_verdict() -> None:
    s = reduce(DashboardState(), [Tick(10.0), LogLine(1, "Load weight begin"),
                                  PhaseEvent(Phase.LOADING_WEIGHTS, 1),
                                  ProcessSample(400.0, 7, "sleeping", cpu_percent=0.0)])
    text = note(s)
    assert text.startswith(" ◆ hung: log silent 6m30s")
    assert note(DashboardState()) == ""


def test_nvidia_smi_backend_does_not_claim_no_processes() -> None:
    from eagle_tui.model.events import GpuInfo, GpuSample
    from eagle_tui.model.state import Gpus
    from eagle_tui.ui.widgets.gpus import GpuPane

    pane = GpuPane()
    g = GpuInfo(0, "H200", mem_used=1, mem_total=2)
    pane.state_gpu = Gpus(GpuSample(1.0, "ok", (g,), backend="nvidia-smi"))
    assert "process list not available via nvidia-smi" in pane._process_lines(g, 80)[0].plain
    pane.state_gpu = Gpus(GpuSample(1.0, "ok", (g,), backend="nvml"))
    assert "no compute processes" in pane._process_lines(g, 80)[0].plain


def test_a_verdict_wraps_onto_more_rows_instead_of_dropping_its_evidence() -> None:
    """``◆ hung:`` with nothing after it at a narrow pane was the evidence cut off: the verdict
    keeps every word at any width, on as many rows as it needs, none wider than the pane."""
    from eagle_tui.model.views.activity import startup_activity

    s = reduce(DashboardState(), [Tick(10.0), LogLine(1, "Load weight begin"),
                                  PhaseEvent(Phase.LOADING_WEIGHTS, 1),
                                  ProcessSample(400.0, 7, "sleeping", cpu_percent=0.0)])
    act = startup_activity(s)
    assert act is not None and act.kind == "hung"
    for width in (30, 38, 50, 78, 158):
        rows = startup_content(s, width).plain.splitlines()
        note_rows = rows[STEPPER_LINES - 1:]
        assert all(len(r) <= width for r in note_rows), (width, note_rows)
        said = " ".join(r.strip() for r in note_rows)
        assert said == f"◆ hung: {act.detail}", (width, said)
    assert len(startup_content(s, 38).plain.splitlines()) > STEPPER_LINES
