"""Pane contents as pure functions of the state: exact text, without a terminal."""

from __future__ import annotations

from eagle_tui.model.events import (
    CrashEvent,
    DraftConfig,
    GpuInfo,
    HiddenStateDims,
    Phase,
    PhaseEvent,
    Tick,
)
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState
from eagle_tui.model.state.alert import Alert
from eagle_tui.ui.widgets.alerts import AlertOrder, alerts_content
from eagle_tui.ui.widgets.gpus import gpu_row, imbalanced
from eagle_tui.ui.widgets.metrics import dims_check, metrics_content
from eagle_tui.ui.widgets.startup import crash_title, startup_content, step_states
from eagle_tui.ui.widgets.status import status_line
from tests.support.ui_scenarios import GIB, H200_TOTAL, SCENARIOS


def state_of(name: str) -> DashboardState:
    return reduce(DashboardState(), SCENARIOS[name]())


def test_stepper_while_loading_weights() -> None:
    s = state_of("loading_weights")
    statuses = [(step.label, st) for step, st, _ in step_states(s)]
    assert statuses == [("args", "done"), ("weights", "active"), ("KV cache", "pending"),
                        ("CUDA graphs", "pending"), ("HTTP", "pending"), ("warmup", "pending"),
                        ("ready", "pending")]
    text = startup_content(s, 60).plain.splitlines()
    assert text[0] == " ✓ args                7.9s "
    assert text[1].startswith(" ▶ weights             3.6s 2/4 ████████")
    assert text[7] == " total 0:11  · health no_listener"
    assert text[8].startswith(" pid 4242 running · up 0:11 · RSS 3.4 GiB")


def test_stepper_draft_graphs_and_ready_time() -> None:
    s = state_of("capturing_graphs")
    lines = startup_content(s, 60).plain.splitlines()
    assert lines[3].startswith(" ▶ CUDA graphs+draft")
    assert "9/14" in lines[3] and lines[3].rstrip().endswith("draft")
    r = state_of("ready_metrics")
    ready = startup_content(r, 60).plain.splitlines()[6]
    assert ready.startswith(" ✓ ready") and ready.rstrip().endswith("27.3s")


def test_crash_marks_the_failed_step() -> None:
    s = state_of("oom_crash")
    failed = [step.label for step, st, _ in step_states(s) if st == "failed"]
    assert failed == ["CUDA graphs"]
    assert s.startup.crash is not None
    assert crash_title(s, s.startup.crash).plain == (
        " ✗ CRASHED  cuda_oom during CUDA graphs at 2025-11-20 10:14:47")
    assert "exit 1" in startup_content(s, 60).plain


def test_dims_check_against_draft_config_and_heuristic() -> None:
    base = DashboardState()
    assert dims_check(base) is None
    s = reduce(base, [HiddenStateDims(21504, 1)])
    assert dims_check(s) == ("21504 = 3×7168 ✓", True)
    s = reduce(base, [HiddenStateDims(7168, 1)])
    assert dims_check(s) == ("7168 ✗ not 3× a hidden size (EAGLE-3 needs 3 concatenated layers)",
                             False)
    s = reduce(base, [DraftConfig("d", ("LlamaForCausalLMEagle3",), True, 7168),
                      HiddenStateDims(7168, 1)])
    assert dims_check(s) == ("7168 ✗ expected 21504 = 3×7168", False)


def test_metrics_rows_show_values_and_sources() -> None:
    text = metrics_content(state_of("ready_metrics"), 60).plain.splitlines()
    assert text[0].startswith(" tok/s      178.4  med   179.2")
    assert text[0].endswith("log")
    assert text[1].startswith(" accept      2.37  mean   2.39")
    # the speedup is the tok/s row's median over the baseline: 179.2 / 90.0
    assert text[3].startswith(" speedup    1.99×  vs 90.0 tok/s baseline")
    assert text[5].startswith(" hidden     12288 = 3×4096 ✓")
    assert not any(line.startswith(" per-pos") for line in text)  # SGLang's log has none
    vllm = metrics_content(state_of("no_gpu"), 60).plain.splitlines()
    assert vllm[3].startswith(" per-pos  1.00 0.93 0.78") and vllm[3].endswith("log")
    assert vllm[2].startswith(" accept %   90.1%")
    empty = metrics_content(DashboardState(), 50).plain.splitlines()
    assert empty[0].startswith(" tok/s          —")
    assert empty[3].startswith(" per-pos        —")
    assert all(len(line) <= 50 for line in empty)


def test_gpu_rows_fit_and_flag_imbalance() -> None:
    def g(i: int, used: float) -> GpuInfo:
        return GpuInfo(index=i, mem_used=int(used * GIB), mem_total=H200_TOTAL, util_gpu=50.0,
                       power_w=400.0, temp_c=60.0)
    gpus = [g(0, 70.0), g(1, 71.0), g(2, 52.0), g(3, 70.5)]
    assert imbalanced(gpus) == {2}
    assert imbalanced([g(0, 0.5), g(1, 60.0)]) == set()  # an idle GPU is not a TP rank
    for width in (30, 36, 40, 60, 76):
        row = gpu_row(gpus[2], [10.0, 90.0], width, True, False).plain
        assert len(row) <= width
        assert "52.0/140G!" in row
    assert gpu_row(GpuInfo(index=3, error="Unknown Error"), [], 40, False, False).plain == \
        " 3 Unknown Error"


def test_alert_order_root_cause_first_and_stable_within_a_batch() -> None:
    # issue 12: the first alert to fire (the root cause) stays on top of its consequences
    a, b, c = (Alert("a", "critical", "A"), Alert("b", "warning", "B"), Alert("c", "info", "C"))
    order = AlertOrder()
    assert [x.kind for x in order.update((a, b))] == ["a", "b"]
    assert [x.kind for x in order.update((a, b, c))] == ["a", "b", "c"]
    assert [x.kind for x in order.update((a, c))] == ["a", "c"]
    assert [x.kind for x in order.update((a, b, c))] == ["a", "c", "b"]
    # a consequence that fired first but is less severe still comes after the batch's order
    crash, lost = Alert("crash", "critical", "X"), Alert("health_lost", "critical", "Y")
    fresh = AlertOrder()
    assert [x.kind for x in fresh.update((crash, lost))] == ["crash", "health_lost"]
    assert alerts_content([]).plain == "no alerts"
    assert alerts_content([a]).plain == "✗ CRITICAL A"


def test_an_alert_with_a_fix_says_f_only_when_f_applies() -> None:
    from eagle_tui.model.launching.remedy import set_flag

    fixable = Alert("eagle3_draft_with_eagle", "critical", "A",
                    remedy=set_flag("--speculative-algorithm", "EAGLE3"))
    other = Alert("drafts_rejected", "critical", "B")
    assert alerts_content([fixable, other], fix=True).plain == \
        "✗ CRITICAL A  F fix\n✗ CRITICAL B"
    assert "F fix" not in alerts_content([fixable, other]).plain  # no control: no F


def test_status_line_priorities_fit_80_columns() -> None:
    s = state_of("misconfigured")
    line = status_line(s, "a-very-long-source-label-that-should-go-first", 80).plain
    assert len(line) <= 80
    assert "SERVING" in line and "✗ 3 critical" in line and "tok/s" in line
    crash = status_line(state_of("oom_crash"), "", 80).plain
    assert "CRASHED: cuda_oom" in crash


def test_crash_text_from_the_server_is_inert() -> None:
    evil = "boom \x1b]0;pwned\x07 [link=http://x]click[/link] [/]"
    s = reduce(DashboardState(), [Tick(1.0), PhaseEvent(Phase.INIT, 1),
                                  CrashEvent("other_traceback", 3, evil, "hint [b]x[/b]")])
    assert s.startup.crash is not None
    title = crash_title(s, s.startup.crash).plain
    assert "\x1b" not in title
