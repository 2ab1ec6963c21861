"""Alert rules: pure functions from the dashboard state to a tuple of alerts.

Each rule looks at the state only (no clock, no I/O), so the same rules drive the TUI's alert
pane, ``wait``'s diagnosis and ``report``'s JSON, and each rule is a one-line unit test. Which
tok/s and accept length a rule judges (the log's or ``/metrics'``) is :mod:`.figures`' choice,
the one the status line and the Metrics pane show.

The rules exist mostly for one failure that nothing else reports: an EAGLE-3 draft launched with
``--speculative-algorithm EAGLE`` (or NEXTN). The target then hands the draft its final hidden
state (e.g. 7168 dims) instead of the concatenation of three layers (21504), the draft's ``fc``
projection is silently skipped, and acceptance collapses to ~1.0 while every log line looks fine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from eagle_tui.model.engines import profile_of
from eagle_tui.model.engines.facets.logs import AlertWording
from eagle_tui.model.launching.remedy import Remedy
from eagle_tui.model.state.alert import Alert
from eagle_tui.model.views.activity import stuck_collective, stuck_message
from eagle_tui.model.views.figures import accept_len, accept_lifetime, tok_s
from eagle_tui.model.views.hold import hold_of, rule_held
from eagle_tui.model.views.numtext import fixed
from eagle_tui.model.views.ranks import rule_rank_collapsed
from eagle_tui.model.views.tier import RECOVER_ACCEPT_LEN, REJECT_ACCEPT_LEN, thresholds, tier

if TYPE_CHECKING:
    from eagle_tui.model.state import DashboardState

REJECT_CONSECUTIVE = 2
RECOVER_CONSECUTIVE = 3
RECOVERED_SHOWN = 60  # stats lines a recovery is announced for
NO_DRAFTS_INTERVALS = 5  # intervals of generation without a verified draft before it is said
EAGLE3_ARCH_MARKERS = ("eagle3",)  # LlamaForCausalLMEagle3, Eagle3LlamaForCausalLM, Qwen3Eagle3...
PLAUSIBLE_WIDTH_MULTIPLE = 64
SEVERITY_ORDER = {"critical": 0, "warning": 1, "info": 2}


def is_eagle3_architecture(arch: str | None) -> bool:
    return bool(arch) and any(m in arch.lower() for m in EAGLE3_ARCH_MARKERS)  # type: ignore[union-attr]


def _algorithm(state: DashboardState) -> str | None:
    algo = state.config.spec.algorithm if state.config.spec else None
    return algo.upper() if algo else None


def _draft_is_eagle3(state: DashboardState) -> bool | None:
    """True/False when the draft's identity is known (config.json or the log), else None."""
    if state.config.draft_config is not None:
        return state.config.draft_config.is_eagle3
    for m in state.config.models:
        if m.role == "draft" and m.architecture:
            return is_eagle3_architecture(m.architecture)
    return None


def _expected_concat_dim(state: DashboardState) -> int | None:
    dc = state.config.draft_config
    if dc is None:
        return None
    width = dc.target_hidden_size or dc.hidden_size
    return 3 * width if width else None


def _wording(state: DashboardState) -> AlertWording:
    """How the engine spells its speculative settings (the default spelling for an engine that
    gives none, or an unknown one)."""
    profile = profile_of(state.startup.engine)
    return profile.logs.wording if profile is not None else AlertWording()


def _eagle3_remedy(state: DashboardState) -> Remedy | None:
    """The engine's edit that makes the server run the draft as EAGLE-3 (``None``: unknown)."""
    profile = profile_of(state.startup.engine)
    return profile.launch.eagle3_remedy if profile is not None else None


Points = tuple[tuple[float, float], ...]
Limits = tuple[float, float]  # (rejected at or below, recovered above)
FIXED: Limits = (REJECT_ACCEPT_LEN, RECOVER_ACCEPT_LEN)


def _completes(pts: Points, i: int, limits: Limits = FIXED) -> str:
    """What the stats line ``i`` completes: ``"low"`` (the second low line in a row),
    ``"high"`` (the :data:`RECOVER_CONSECUTIVE` th high line in a row), else ``""``."""
    low, high = limits
    if i >= REJECT_CONSECUTIVE - 1 and all(
            pts[j][1] <= low for j in range(i - REJECT_CONSECUTIVE + 1, i + 1)):
        return "low"
    if i >= RECOVER_CONSECUTIVE - 1 and all(
            pts[j][1] > high for j in range(i - RECOVER_CONSECUTIVE + 1, i + 1)):
        return "high"
    return ""


def rejection(points: Points, limits: Limits = FIXED) -> tuple[str, int]:
    """Where acceptance stands, with hysteresis: ``("rejected", i)`` from the second
    consecutive line at ≤ :data:`REJECT_ACCEPT_LEN` (``i``: the last low line) until a sustained
    recovery, ``("recovered", i)`` once :data:`RECOVER_CONSECUTIVE` consecutive lines above
    :data:`RECOVER_ACCEPT_LEN` followed such an episode (``i``: the line that completed the
    recovery, within the last :data:`RECOVERED_SHOWN` lines), else ``("", -1)``. Read
    backwards: the newest completed pattern decides, so a steady server costs a bounded few
    lines, not the whole series. ``limits``: the tier's thresholds (:func:`.tier.thresholds`)."""
    i, seen = _newest(points, len(points) - 1, limits)
    if seen == "low":
        return "rejected", i
    if seen != "high":
        return "", -1
    # the high stretch that ends at ``i`` completes first RECOVER_CONSECUTIVE - 1 lines after
    # its start, the recovery; found by one comparison a line, back to the oldest line shown
    oldest = max(1, len(points) - RECOVERED_SHOWN)  # (a healthy server: a bounded walk)
    start, high = i, limits[1]
    while start > oldest - RECOVER_CONSECUTIVE and start > 0 and points[start - 1][1] > high:
        start -= 1
    j = start + RECOVER_CONSECUTIVE - 1
    if j < oldest:
        return "", -1  # healthy for longer than a recovery is announced
    _, before = _newest(points, j - 1, limits)
    return ("recovered", j) if before == "low" else ("", -1)


def _newest(pts: Points, i: int, limits: Limits = FIXED) -> tuple[int, str]:
    """The newest line at or before ``i`` that completes a pattern, and which (``""``: none)."""
    while i >= 0:
        if seen := _completes(pts, i, limits):
            return i, seen
        i -= 1
    return -1, ""


def _at(state: DashboardState, t: float) -> str:
    """When a series point was taken: the run's clock, where the run has one."""
    start = state.clock.t_start
    return f" at {_clock(t - start)} into the run" if start is not None and t >= start else ""


def _of_tier(state: DashboardState, limits: Limits) -> str:
    """`` for block 16`` where the thresholds are the tier's rather than the fixed ones."""
    if limits == FIXED:
        return ""
    return f" for {tier(state).text()}"


def rule_drafts_rejected(state: DashboardState) -> Alert | None:
    points = accept_len(state).series.points
    active = tier(state)
    if active.off:
        return None  # no drafts now (an adaptive tier of 0 steps): nothing to reject
    limits = thresholds(active)
    low_at, high_at = limits
    where, i = rejection(points, limits)
    if where == "recovered":
        t, v = points[i]
        return Alert(
            "drafts_recovered", "info",
            f"Acceptance recovered to {fixed(v, 2)}{_at(state, t)} ({RECOVER_CONSECUTIVE} "
            f"consecutive stats lines above {fixed(high_at, 2)}{_of_tier(state, limits)} after "
            "drafts were being rejected).")
    if where != "rejected":
        return None
    low = points[i][1]
    last = points[-1][1]
    now = "" if i == len(points) - 1 else (
        f" Now {fixed(last, 2)}: not recovered until {RECOVER_CONSECUTIVE} consecutive lines are "
        f"above {fixed(high_at, 2)}.")
    return Alert(
        "drafts_rejected",
        "critical",
        f"Drafts are being rejected: accept length {fixed(low, 2)} (≤ {fixed(low_at, 2)}"
        f"{_of_tier(state, limits)} on "
        f"{REJECT_CONSECUTIVE}+ consecutive stats lines). Speculative decoding is costing time, "
        f"not saving it. Check the draft model and {_wording(state).algorithm_flag}.{now}",
    )


def rule_no_drafts_verified(state: DashboardState) -> Alert | None:
    """Speculation is configured, the server has been generating for a while, and not one
    draft was verified: no acceptance in any stats line, ``/metrics`` sample or
    ``/server_info`` (an engine logs no spec-metrics line for an interval without drafts)."""
    spec = state.config.spec
    if spec is None or accept_len(state).known or accept_lifetime(state).known:
        return None
    serving = [v for v in tok_s(state).series.values() if v > 0]
    if len(serving) < NO_DRAFTS_INTERVALS:
        return None
    what = f"{spec.algorithm} " if spec.algorithm else ""
    return Alert(
        "no_drafts_verified", "warning",
        f"Speculative decoding is configured ({what}{spec.draft_model or 'a draft model'}) but no "
        f"draft was verified in {len(serving)} stats intervals of generation: the server is "
        "decoding without its draft. Check that the draft loaded and "
        f"{_wording(state).algorithm_flag}.",
    )


def rule_hidden_dims(state: DashboardState) -> Alert | None:
    if not state.config.hidden_dims:
        return None
    dim = state.config.hidden_dims[-1]
    expected = _expected_concat_dim(state)
    if expected is not None:
        bad = dim != expected
        detail = f"expected {expected} = 3×{expected // 3}"
    else:
        bad = dim % 3 != 0 or (dim // 3) % PLAUSIBLE_WIDTH_MULTIPLE != 0
        detail = "expected 3× the target hidden size"
    if not bad:
        return None
    launched = _wording(state).eagle_not_eagle3
    return Alert(
        "hidden_dims",
        "critical",
        f"EAGLE-3 aux hidden states not captured: was the server launched with "
        f"{launched}? hidden_states dim is {dim}, {detail}.",
        remedy=_eagle3_remedy(state),
    )


def rule_eagle3_draft_with_eagle(state: DashboardState) -> Alert | None:
    algo = _algorithm(state)
    if algo not in ("EAGLE", "NEXTN"):
        return None
    if not _draft_is_eagle3(state):
        return None
    draft = (state.config.spec.draft_model if state.config.spec else None) or "the draft"
    profile = profile_of(state.startup.engine)
    wording = _wording(state)
    runs = wording.runs_method.format(algo=algo.lower(), upper=algo)
    if profile is not None and profile.logs.eagle3_as_eagle_refused:
        refused = state.startup.crash is not None and state.startup.crash.kind == "config_error"
        what = (f"{profile.label} refused it at startup (it has no EAGLE-1 model of an EAGLE-3 "
                "draft)" if refused else "the draft cannot get the 3 concatenated layers it needs")
        return Alert(
            "eagle3_draft_with_eagle",
            "critical",
            f"{draft} is an EAGLE-3 checkpoint but the server runs {runs}: {what}. "
            f"{wording.eagle3_fix}",
            remedy=_eagle3_remedy(state),
        )
    return Alert(
        "eagle3_draft_with_eagle",
        "critical",
        f"{draft} is an EAGLE-3 checkpoint but the server runs {runs}: "
        "the draft gets final hidden states instead of 3 concatenated layers and acceptance "
        f"collapses silently. {wording.eagle3_fix}",
        remedy=_eagle3_remedy(state),
    )


def rule_below_baseline(state: DashboardState) -> Alert | None:
    base = state.metrics.baseline_tok_s
    if not base:
        return None
    vals = [v for v in tok_s(state).series.values(last_n=5) if v > 0]
    if len(vals) < 3:
        return None
    med = sorted(vals)[len(vals) // 2]
    if med >= base:
        return None
    return Alert(
        "below_baseline",
        "warning",
        f"Throughput {fixed(med, 1)} tok/s is below the non-speculative baseline of "
        f"{fixed(base, 1)} tok/s ({fixed(med / base, 2)}×): speculative decoding is slowing this "
        "server down.",
    )


def rule_crash(state: DashboardState) -> Alert | None:
    c = state.startup.crash
    if c is None:
        return None
    # the file's own line number (``lineno_base``: a log opened at its end), "~" till counted
    base = state.log.lineno_base
    where = f"line {c.lineno + base}" if base is not None else f"line ~{c.lineno}"
    return Alert("crash", "critical", f"{c.kind} at {where}: {c.message} — {c.hint}", c.lineno)


def rule_process_exit(state: DashboardState) -> Alert | None:
    ex = state.live.process_exit
    if ex is None or state.startup.crash is not None or state.live.stopped is not None:
        return None  # (the user's own stop is no failure: the status line says "stopped")
    code = f"exit code {ex.exit_code}" if ex.exit_code is not None else "exit status unknown"
    return Alert("process_exited", "critical", f"Server process {ex.pid} exited ({code}).")


def rule_health_lost(state: DashboardState) -> Alert | None:
    h = state.live.health
    if (h is None or not state.live.ever_ready_health or h.state == "ready"
            or state.live.stopped is not None or hold_of(state) is not None):
        return None  # (a paused server's readiness says 503 on purpose: rule_held says so)
    return Alert("health_lost", "critical",
                 f"{h.path or '/health'} was ready and is now {h.state}"
                 f"{': ' + h.error if h.error else ''}.")


def rule_stuck_collective(state: DashboardState) -> Alert | None:
    stuck = stuck_collective(state)
    if stuck is None or hold_of(state) is not None:  # held on purpose: no stall
        return None
    return Alert("stuck_collective", "critical", stuck_message(stuck))


def rule_source_failures(state: DashboardState) -> Alert | None:
    if not state.live.failures:
        return None
    parts = ", ".join(f"{f.source} ({f.error})" for f in state.live.failures)
    return Alert("source_failed", "info", f"Not receiving data from: {parts}; retrying.")


def rule_metrics_skipped(state: DashboardState) -> Alert | None:
    """The newest ``/metrics`` scrape skipped values it cannot represent (the rest is read)."""
    m = state.metrics.last
    if m is None or not m.skipped:
        return None
    return Alert("metrics_values_skipped", "info", f"/metrics: {m.skipped}.")


def _clock(seconds: float) -> str:
    s = int(seconds)
    if s >= 3600:
        return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"
    return f"{s // 60}:{s % 60:02d}"


def rule_slow_phase(state: DashboardState) -> Alert | None:
    """A startup step taking more than twice its usual time (the run history's median)."""
    if state.startup.usual is None or state.startup.crash is not None:
        return None
    from eagle_tui.model.views.eta import step_eta
    from eagle_tui.model.views.steps import step_states

    for step, status, elapsed in step_states(state):
        if status != "active":
            continue
        eta = step_eta(state, step.label, elapsed)
        if eta is not None and eta.slow and eta.usual is not None and elapsed is not None:
            return Alert("slow-phase", "warning",
                         f"{step.label}: {_clock(elapsed)}, usually {_clock(eta.usual)} "
                         f"(median of {state.startup.usual.runs} earlier run"
                         f"{'s' * (state.startup.usual.runs != 1)} with the same model and flags)")
    return None


RULES = (
    rule_crash,
    rule_process_exit,
    rule_health_lost,
    rule_held,
    rule_stuck_collective,
    rule_eagle3_draft_with_eagle,
    rule_hidden_dims,
    rule_drafts_rejected,
    rule_no_drafts_verified,
    rule_rank_collapsed,
    rule_below_baseline,
    rule_slow_phase,
    rule_source_failures,
    rule_metrics_skipped,
)


def evaluate_alerts(state: DashboardState) -> tuple[Alert, ...]:
    """All firing alerts, most severe first (stable within a severity)."""
    found = [a for rule in RULES if (a := rule(state)) is not None]
    found.sort(key=lambda a: SEVERITY_ORDER[a.severity])
    return tuple(found)
