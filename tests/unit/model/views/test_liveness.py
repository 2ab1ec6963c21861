"""States that cannot lie: idle, stale, dead and restarted (eagle_tui.model.views.liveness), on the
recorded real vLLM run (tests/fixtures/vllm-cpu/) and SGLang run (tests/fixtures/sglang-cpu/)."""

from __future__ import annotations

import pytest

from eagle_tui.model.events import (
    Baseline,
    DecodeStats,
    Event,
    HealthSample,
    LogRestarted,
    MetricsSample,
    ProcessExited,
    ProcessSample,
    SpecStats,
    Tick,
)
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.ingest.parser import LogParser
from eagle_tui.model.state import DashboardState
from eagle_tui.model.views.figtext import figures_dict, figures_text
from eagle_tui.model.views.figures import figures
from eagle_tui.model.views.liveness import DEAD_AFTER_S, IDLE_AFTER_S, liveness
from tests.support.paths import TESTS

FIX = TESTS / "fixtures"
T0 = 1_796_000_000.0
VLLM = (FIX / "vllm-cpu" / "server-eagle3.log").read_text().splitlines()
SGLANG = (FIX / "sglang-cpu" / "eagle3.log").read_text().splitlines()


def replay(lines: list[str], *extra: Event, t: float = T0) -> tuple[DashboardState, float]:
    parser, state = LogParser(), reduce(DashboardState(), [Tick(t), *extra])
    for line in lines:
        events = parser.feed_line(line)
        if any(isinstance(e, DecodeStats | SpecStats) for e in events):
            t += 2.0
        state = reduce(state, [Tick(t), *events])
    return state, t


def busy_vllm() -> tuple[DashboardState, float]:
    """The recorded vLLM run up to its last busy interval, served at ~1000 tok/s."""
    last = max(i for i, line in enumerate(VLLM) if "SpecDecoding metrics" in line)
    return replay(VLLM[: last + 1], Baseline(500.0))


def test_vllm_busy_is_active_and_current() -> None:
    state, _ = busy_vllm()
    figs = figures(state)
    assert figs.live.activity == "active"
    assert figs.tok_s.current and figs.accept_len.current


def test_vllm_idle_line_shows_idle_and_keeps_last_active_figures() -> None:
    """Its ``Running: 0 reqs, 0.0 tokens/s`` line is an idle interval: no point in any series."""
    state, _ = replay(VLLM, Baseline(500.0))
    figs = figures(state)
    assert figs.live.activity == "idle"
    assert figs.tok_s.value == pytest.approx(1023.3)  # the last active interval, not 0.0
    assert figs.tok_s.freshness == figs.accept_len.freshness == "last_active"
    assert 0.0 not in state.stats.gen_tps.values()
    assert figs.speedup.value is not None and figs.speedup.value > 1.0  # never 0.00×
    assert figs.accept_len.value == pytest.approx(3.53)  # never 1.00
    d = figures_dict(figs)
    assert d["state"] == "idle" and d["tok_s"]["freshness"] == "last_active"
    text = figures_text(figs)
    assert text is not None and text.startswith("IDLE · last active: tok/s 1023.3")


def test_idle_metrics_are_not_readings() -> None:
    """An idle server's /metrics: running 0 and nothing generated: no tok/s 0.0, no accept."""
    s = reduce(DashboardState(), [MetricsSample(T0 + i, "sglang", gen_tps=150.0, accept_len=3.6,
                                                running=2) for i in range(3)])
    s = reduce(s, [MetricsSample(T0 + 3 + i, "sglang", gen_tps=0.0, accept_len=1.0, running=0)
                   for i in range(5)])
    figs = figures(s)
    assert figs.live.activity == "idle"
    assert s.metrics.gen_tps.values() == [150.0] * 3 and s.metrics.accept_len.values() == [3.6] * 3
    assert figs.accept_len.value == 3.6 and figs.accept_len.freshness == "last_active"


def test_sglang_silence_is_idle_while_health_says_ready() -> None:
    """SGLang prints no Decode line without a running request: silence + /health ready = idle."""
    state, t = replay(SGLANG)
    assert liveness(state).activity == "active"
    later = t + IDLE_AFTER_S + 1
    idle = reduce(state, [HealthSample("ready", later, 200, 0.001), Tick(later)])
    assert liveness(idle).activity == "idle"
    assert figures(idle).accept_len.freshness == "last_active"


def test_silence_with_no_evidence_is_stale_with_its_age() -> None:
    state, t = replay(SGLANG)
    stale = reduce(state, [Tick(t + 40)])
    live = liveness(stale)
    assert live.activity == "stale" and live.data_age_s == pytest.approx(40)
    fig = figures(stale).tok_s
    assert fig.freshness == "stale" and fig.age_s == pytest.approx(40)
    text = figures_text(figures(stale))
    assert text is not None and text.startswith("STALE (no data for 40 s) · 40 s old:")


def test_process_exit_is_dead() -> None:
    state, t = busy_vllm()
    dead = reduce(state, [ProcessExited(t + 1, 330, None, 15), Tick(t + 2)])
    live = liveness(dead)
    assert live.activity == "dead" and "signal 15" in live.reason
    assert figures(dead).tok_s.freshness == "dead"
    # SIGKILL is a crash (killed): the crash banner speaks, not the liveness
    killed = reduce(state, [ProcessExited(t + 1, 330, None, 9), Tick(t + 2)])
    assert killed.startup.crash is not None and liveness(killed).activity == ""


def test_health_gone_after_ready_is_dead() -> None:
    state, t = busy_vllm()
    state = reduce(state, [HealthSample("ready", t, 200, 0.001)])
    assert liveness(reduce(state, [HealthSample("timeout", t + 1), Tick(t + 1)])).activity \
        == "active"
    late = t + DEAD_AFTER_S + 1
    slow = reduce(state, [HealthSample("timeout", late), Tick(late)])
    assert liveness(slow).activity == "dead"
    gone = reduce(state, [HealthSample("no_listener", t + 1, error="refused"), Tick(t + 1)])
    assert liveness(gone).activity == "dead"


def test_new_pid_is_a_new_run() -> None:
    state, t = busy_vllm()
    state = reduce(state, [ProcessSample(t, 330, "running")])
    assert len(state.stats.gen_tps)
    new = reduce(state, [ProcessSample(t + 5, 999, "running"), Tick(t + 5)])
    assert len(new.stats.gen_tps) == 0 and new.startup.phases == () and new.startup.restarts == 1
    live = liveness(new)
    assert live.restarted_ago_s == pytest.approx(0.0)
    assert live.activity == ""  # a fresh run: nothing served yet


def test_log_restart_and_counter_reset_start_over() -> None:
    state, t = busy_vllm()
    r = reduce(state, [LogRestarted("truncated", t=t + 1), Tick(t + 1)])
    assert liveness(r).restarted_ago_s == pytest.approx(0.0) and len(r.stats.accept_len) == 0
    m = reduce(DashboardState(), [MetricsSample(T0, "vllm", gen_tps=10.0, running=1)])
    m = reduce(m, [MetricsSample(T0 + 2, "vllm", running=1, counter_reset=True)])
    assert len(m.metrics.gen_tps) == 0 and m.startup.restart_t == T0 + 2


def test_ready_without_a_request_is_idle() -> None:
    first = min(i for i, line in enumerate(VLLM) if "Engine 000" in line)
    state, _ = replay(VLLM[:first])
    assert state.startup.ready and liveness(state).activity == "idle"


def test_waiting_requests_with_none_running_are_not_idle() -> None:
    """``Running: 0 reqs, Waiting: 3 reqs, 0.0 tokens/s``: a server that does not serve."""
    line = ("(APIServer pid=330) INFO 11-30 00:10:32 [loggers.py:335] Engine 000: Avg prompt "
            "throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, Running: 0 reqs,"
            " Waiting: 3 reqs, CPU KV cache usage: 0.0%, Prefix cache hit rate: 0.0%")
    state, _ = replay([*VLLM[: VLLM.index(next(x for x in VLLM if "Engine 000" in x)) + 1], line])
    assert liveness(state).activity == "active"
    assert state.stats.gen_tps.last == 0.0  # a real zero, not an idle interval



def test_a_warm_up_is_not_idle() -> None:
    """Before "ready" the engine's /metrics say nothing runs (its warm-up request comes through
    /generate): the Metrics pane said "IDLE no request running, nothing generated" through a
    minute of warm-up on the real SGLang CPU server. Not idle; once ready, idle it is."""
    ready = next(i for i, line in enumerate(SGLANG) if "fired up and ready" in line)
    for upto, activity in ((ready, ""), (ready + 1, "idle")):
        state, t = replay(SGLANG[:upto])
        assert state.startup.ready is (activity == "idle")
        state = reduce(state, [*(MetricsSample(t + i, "sglang", gen_tps=0.0, running=0)
                                 for i in range(1, 4)), Tick(t + 4)])
        assert liveness(state).activity == activity
