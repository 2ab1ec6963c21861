"""SGLang's piecewise (prefill) CUDA graphs as a sub-step: the stepper row, the headless phase
text and progress JSON, and ``report --json``, from the simulator's lines (each release's
wording; the wording itself is checked in tests/sim/test_sglang_real_format.py)."""

from __future__ import annotations

import io
import json

from eagle_tui.headless.lines import phase_text, progress_dict
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState
from eagle_tui.report import build_report, close
from eagle_tui.report import write_json as dump
from eagle_tui.report.output import render_text
from eagle_tui.sim.scenario import make_config
from eagle_tui.sim.timeline import build_timeline
from eagle_tui.ui.widgets.startup import startup_content
from tests.support.parsing import parse


def lines(version: str) -> list[str]:
    return build_timeline(make_config("sglang", "healthy", gpus=1, engine_version=version)).lines()


def mid_capture(version: str, head: str) -> DashboardState:
    """The state with the capture bar of ``head`` half way."""
    all_lines = lines(version)
    bars = [i for i, ln in enumerate(all_lines) if ln.lstrip("\r").startswith(head)]
    return reduce(DashboardState(), parse(all_lines[: bars[len(bars) // 2] + 1]))


def test_the_stepper_shows_the_piecewise_stage_under_the_graph_step() -> None:
    for version, head in (("0.5.23", "Capturing prefill shape"),
                          ("pre-0.5.23", "Capturing num tokens")):
        state = mid_capture(version, head)
        text = startup_content(state, 70).plain.splitlines()
        row = next(r for r in text if "└ piecewise" in r)
        assert text.index(row) == 4  # right under "CUDA graphs"
        assert "capture" in row and "/12" in row and "left" in row, row
        assert text[5].startswith(" · HTTP")  # (a row of its own: the steps move down one)
        assert "piecewise graphs capture" in phase_text(state)
        got = progress_dict(state)["piecewise_graphs"]
        assert got["stage"] == "capture" and got["total"] == 12 and got["left_s"] > 0


def test_no_piecewise_row_without_piecewise_graphs() -> None:
    state = reduce(DashboardState(), parse(lines("0.5.23")[:12]))  # (loading the weights)
    assert state.startup.piecewise is None
    assert "piecewise" not in startup_content(state, 70).plain
    assert progress_dict(state)["piecewise_graphs"] is None


def test_report_json_names_the_piecewise_graphs() -> None:
    data = ("\n".join(lines("pre-0.5.23")) + "\n").encode()
    r = build_report(io.BytesIO(data), "pcg.log", fast=True)
    out = io.BytesIO()
    try:
        text = render_text(r)
        dump(r, out)
    finally:
        close(r)
    pw = json.loads(out.getvalue())["piecewise_graphs"]
    assert (pw["stage"], pw["done"], pw["total"], pw["role"]) == ("capture", 12, 12, "target")
    assert "piecewise CUDA graphs: capture 12/12 (target" in text
