"""The fleet view against a real Prometheus scraping simulators (and the real CPU servers).

One Prometheus and five simulators per module (scrape every second; targets in a file_sd file,
so the real-server test can add its servers to the same Prometheus): SGLang and vLLM healthy,
both misconfigured (an EAGLE-3 draft launched as EAGLE: accept length ≈ 1), and one SGLang
instance stopped mid-test. Prometheus itself is stopped by the last test.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from eagle_tui.model.fleet.snapshot import FleetRow, FleetSnapshot
from eagle_tui.sources.metrics import parse_metrics
from eagle_tui.sources.prometheus import FleetPoller
from tests.support.fleet_helpers import (
    Load,
    PrometheusServer,
    Sim,
    free_port,
    prometheus_available,
    start_sim,
    wait_serving,
    write_config,
)

pytestmark = pytest.mark.skipif(not prometheus_available(),
                                reason="Debian's prometheus is not installed (tests/install.sh)")
WINDOW = "5s"
REAL_WINDOW_S = 30.0
SIMS = {"sglang": ("sglang", "healthy"), "vllm": ("vllm", "healthy"),
        "vllm_misconf": ("vllm", "misconfigured"), "sglang_misconf": ("sglang", "misconfigured"),
        "doomed": ("sglang", "healthy")}


@dataclass
class Fleet:
    prom: PrometheusServer
    sims: dict[str, Sim]
    targets: Path
    load: Load

    def set_targets(self, targets: list[str]) -> None:
        tmp = self.targets.with_suffix(".tmp")
        tmp.write_text(json.dumps([{"targets": targets}]))
        tmp.replace(self.targets)

    def poller(self, window: str = WINDOW) -> FleetPoller:
        return FleetPoller(self.prom.url, window=window, interval=0.5, deadline_s=3.0)


def snapshot(poller: FleetPoller) -> FleetSnapshot:
    async def one() -> FleetSnapshot:
        async with poller.client() as client:
            return await poller.refresh(client)
    return asyncio.run(one())


def by_instance(snap: FleetSnapshot) -> dict[str, FleetRow]:
    return {r.instance: r for r in snap.rows}


def wait_rows(fleet: Fleet, ok: object, within_s: float = 30.0, window: str = WINDOW,
              only: set[str] | None = None) -> FleetSnapshot:
    """Refresh until ``ok(rows)`` holds (bounded); on failure show the rows (``only`` those)."""
    poller = fleet.poller(window=window)
    deadline = time.monotonic() + within_s
    snap = snapshot(poller)
    while not ok(by_instance(snap)):  # type: ignore[operator]
        if time.monotonic() > deadline:
            shown = [r.as_dict() for r in snap.rows if only is None or r.instance in only]
            raise AssertionError(f"fleet not as expected after {within_s} s: {shown}")
        time.sleep(0.5)
        snap = snapshot(poller)
    return snap


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    work = tmp_path_factory.mktemp("fleet")
    sims: dict[str, Sim] = {}
    load = Load([])
    prom = None
    try:
        for name, (engine, scenario) in SIMS.items():
            sims[name] = start_sim(work / name, engine, scenario)
        for s in sims.values():
            wait_serving(s.url)
        load = Load([s.url for s in sims.values()], per_url=2).start()
        targets = work / "targets.json"
        targets.write_text(json.dumps([{"targets": [s.target for s in sims.values()]}]))
        config = work / "prometheus.yml"
        write_config(config, [], file_sd=targets)
        prom = PrometheusServer(work, config)
        prom.start()
        # scraping starts ~5 s after ready; then a rate window of samples
        prom.wait_for("count_over_time(up[10s]) >= 4", len(sims), within_s=40)
        yield Fleet(prom, sims, targets, load)
    finally:
        load.stop()
        if prom is not None:
            prom.stop()
        for s in sims.values():
            s.stop()


def serving(rows: dict[str, FleetRow], fleet: Fleet) -> bool:
    return all(
        (r := rows.get(s.target)) is not None and r.state == "serving" and r.accept_len is not None
        for s in fleet.sims.values())


def until_flagged(poller: Any, target: str, started: float) -> tuple[Any, list[dict[str, object]]]:
    """Refresh about once a second until ``target``'s row carries ``drafts_rejected`` or
    :data:`FLAG_WITHIN_S` has passed since ``started`` (bounded in count and time)."""
    seen: list[dict[str, object]] = []
    row = None
    for _ in range(int(FLAG_WITHIN_S)):
        if time.monotonic() - started > FLAG_WITHIN_S:
            break
        row = by_instance(snapshot(poller)).get(target)
        if row is not None:
            seen.append(row.as_dict())
            if "drafts_rejected" in row.flags:
                break
        time.sleep(1.0)
    return row, seen


def test_rows_engines_and_the_misconfigured_flagged(fleet: Fleet) -> None:
    rows = by_instance(wait_rows(fleet, lambda rows: serving(rows, fleet)))
    for name, (engine, scenario) in SIMS.items():
        row = rows[fleet.sims[name].target]
        assert row.engine == engine and row.up and row.model
        assert row.tok_s is not None and row.tok_s > 0
        assert row.ttft_p99 is not None and row.running is not None
        if scenario == "misconfigured":
            assert row.accept_len is not None and row.accept_len < 1.1, row
            assert "drafts_rejected" in row.flags
        else:
            assert row.accept_len is not None and row.accept_len > 2.0, row
            assert "drafts_rejected" not in row.flags
    assert len(rows[fleet.sims["vllm"].target].per_position) == 3
    # SGLang answers Prometheus' OpenMetrics Accept header with ':' escaped (as the real one)
    assert fleet.prom.query('count({__name__="sglang_num_running_reqs"})')
    assert not fleet.prom.query('count({__name__="sglang:num_running_reqs"})')


LONG_TOKENS = 8000  # a misconfigured request this long runs minutes: its counters stay flat
FLAG_WITHIN_S = 60.0


def test_a_collapsed_acceptance_is_flagged_within_the_first_minute_of_load(
        fleet: Fleet, tmp_path: Path) -> None:
    """A misconfigured SGLang instance (an EAGLE-3 draft launched as EAGLE), just started and
    idle, then loaded with long requests: the fleet, at its default window, flags it within
    a minute of the load's start (the engine counts tokens and verify calls when a request
    finishes, so only the scheduler's gauge moves), over a rate window shorter than the
    default (the instance is young, Prometheus scrapes it every second)."""
    sim = start_sim(tmp_path / "late", "sglang", "misconfigured")
    others = [s.target for s in fleet.sims.values() if s.proc.poll() is None]
    load = Load([])
    try:
        wait_serving(sim.url)
        fleet.set_targets([*others, sim.target])
        fleet.prom.wait_for(f'count_over_time(up{{instance="{sim.target}"}}[1m]) >= 2',
                            within_s=30)
        poller = FleetPoller(fleet.prom.url, interval=1.0, deadline_s=3.0)
        load = Load([sim.url], per_url=2, max_tokens=LONG_TOKENS).start()
        started = time.monotonic()
        row, seen = until_flagged(poller, sim.target, started)
        took = time.monotonic() - started
        assert row is not None and "drafts_rejected" in row.flags, seen[-3:]
        assert took <= FLAG_WITHIN_S
        assert row.accept_len is not None and row.accept_len <= 1.1
        assert row.window_s is not None and row.window_s < 60.0, row
        assert poller.plan.scrape.get(sim.target) == 1.0  # read from /api/v1/targets
        print(f"flagged {took:.1f} s after the load started, window {row.window_s} s")
    finally:
        sim.stop()  # first: the long requests end with it, so the load's threads return
        load.stop()
        fleet.set_targets(others)


def _direct_url(url: str) -> tuple[float, dict[str, float]]:
    t = time.time()
    text = httpx.get(f"{url}/metrics", timeout=5.0, trust_env=False).text
    return t, parse_metrics(text, t).counters


def _scrape_time(fleet: Fleet, target: str) -> float:
    result = fleet.prom.query(f'timestamp(up{{instance="{target}"}})')
    return float(result[0]["value"][1]) if result else 0.0  # type: ignore[index]


def aligned_reading(fleet: Fleet, url: str,
                    target: str) -> tuple[float, float, dict[str, float]]:
    """The server's own counters read right after one of Prometheus' scrapes of it: (that
    scrape's timestamp, the reading's own time, the counters). Both describe nearly the same
    moment (a busy CPU server answers /metrics some 10-500 ms later)."""
    last = _scrape_time(fleet, target)
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        now = _scrape_time(fleet, target)
        if now > last:
            return (now, *_direct_url(url))
        time.sleep(0.01)
    raise AssertionError(f"no new scrape of {target} within 5 s")


def own_figures(name: str, c0: dict[str, float], c1: dict[str, float],
                dt: float) -> tuple[float, float]:
    """(tok/s, accept length) from a server's own counters at two moments."""
    engine = name.split("_")[0]
    gen = c1[f"{engine}:generation_tokens"] - c0[f"{engine}:generation_tokens"]
    if engine == "vllm":
        drafts = c1["vllm:spec_decode_num_drafts"] - c0["vllm:spec_decode_num_drafts"]
        accepted = (c1["vllm:spec_decode_num_accepted_tokens"]
                    - c0["vllm:spec_decode_num_accepted_tokens"])
        return gen / dt, 1 + accepted / drafts
    verify = c1["sglang:spec_verify_calls"] - c0["sglang:spec_verify_calls"]
    return gen / dt, gen / verify


def compare_over_a_window(fleet: Fleet, servers: list[tuple[str, str, str]], seconds: float,
                          load: Callable[[], Load],
                          ) -> dict[str, tuple[FleetRow, float, float]]:
    """For each (engine, url, target): the fleet's row over exactly the window between two
    aligned readings, and the server's own tok/s and accept length over it.

    The servers idle before: the load runs only inside the window and is drained before the
    second reading, so both edges are quiet, a counter reads the same at the scrape and at the
    direct reading, and the scrapes' own timestamps are the window for both."""
    before = {t: aligned_reading(fleet, url, t) for _, url, t in servers}
    running = load()
    time.sleep(seconds)
    running.stop()  # joins: every request finished
    time.sleep(1.5)  # a scrape after the last one
    after = {t: aligned_reading(fleet, url, t) for _, url, t in servers}
    out = {}
    for engine, _, target in servers:
        (ts0, _, c0), (ts1, _, c1) = before[target], after[target]
        # the window holds exactly the two scrapes (left-open range: + 1 ms), so rate()
        # has nothing to extrapolate
        window = f"{round((ts1 - ts0) * 1000) + 1}ms"
        # exactly that window for every row: no shorter tier for a young instance
        poller = FleetPoller(fleet.prom.url, window=window, clock=lambda ts=ts1: ts,
                             adaptive=False)
        row = by_instance(snapshot(poller))[target]
        out[target] = (row, *own_figures(engine, c0, c1, ts1 - ts0))
    return out


def test_figures_within_two_percent_of_the_servers_own_counters(fleet: Fleet,
                                                                tmp_path: Path) -> None:
    """A fresh idle simulator per engine, the load only inside the window, so both edges are
    quiet: a steady load moves the counters between Prometheus' scrape and the direct reading
    (10-500 ms apart on a busy 2-core machine), which is the reading's error, not the fleet's;
    SGLang also counts a request's tokens and verify calls only when it finishes."""
    wait_rows(fleet, lambda rows: serving(rows, fleet))
    sims = [start_sim(tmp_path / engine, engine, "healthy") for engine in ("vllm", "sglang")]
    others = [s.target for s in fleet.sims.values() if s.proc.poll() is None]
    try:
        for sim in sims:
            wait_serving(sim.url)
        fleet.set_targets([*others, *(sim.target for sim in sims)])
        for sim in sims:
            fleet.prom.wait_for(f'count_over_time(up{{instance="{sim.target}"}}[1m]) >= 2',
                                within_s=30)
        urls = [sim.url for sim in sims]
        found = compare_over_a_window(
            fleet, [(sim.engine, sim.url, sim.target) for sim in sims], 8.0,
            load=lambda: Load(urls, per_url=2).start())
    finally:
        for sim in sims:
            sim.stop()
        fleet.set_targets(others)
    assert set(found) == {sim.target for sim in sims}
    for target, (row, own_tok_s, own_accept) in found.items():
        assert row.tok_s == pytest.approx(own_tok_s, rel=0.02), target
        assert row.accept_len == pytest.approx(own_accept, rel=0.02), target


def test_requests_per_refresh_do_not_grow_with_instances(fleet: Fleet) -> None:
    poller = fleet.poller()

    async def three() -> list[FleetSnapshot]:
        return [s async for s in poller.snapshots(count=3)]

    snaps = asyncio.run(three())
    assert len(snaps[-1].rows) >= len(SIMS)
    assert poller.requests == 3 * len(poller.groups) == 12
    assert poller.target_requests == 1  # the scrape intervals: once a minute, not per instance


def test_cli_json_one_object_per_refresh(fleet: Fleet) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "eagle_tui", "fleet", "--prometheus", fleet.prom.url, "--json",
         "--count", "2", "--interval", "0.5", "--window", WINDOW], capture_output=True,
        text=True, timeout=60, check=True)
    docs = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(docs) == 2
    for entry in docs[-1]["instances"]:
        assert {"instance", "engine", "up", "state", "tok_s", "accept_len", "flags"} <= set(entry)
    flagged = {e["instance"] for e in docs[-1]["instances"] if "drafts_rejected" in e["flags"]}
    assert fleet.sims["vllm_misconf"].target in flagged


async def test_enter_drills_into_the_ordinary_dashboard(fleet: Fleet) -> None:
    """Fleet screen on the live Prometheus → Enter on the SGLang row → the dashboard for it,
    with that instance's metrics."""
    from eagle_tui.assembly.fleet import FleetSpec, drill_spec
    from eagle_tui.assembly.open import prepare_dashboard
    from eagle_tui.model.fleet.flags import FleetFilter
    from eagle_tui.ui.fleet_app import FleetApp

    target = fleet.sims["sglang"].target
    poller = fleet.poller()
    app = FleetApp(lambda: poller.snapshots(), filter=FleetFilter(text=target))
    async with app.run_test(size=(160, 30)) as pilot:
        for _ in range(200):
            if app.snapshot is not None and app._shown:
                break
            await pilot.pause(0.05)
        await pilot.press("enter")
    chosen = app.return_value
    assert chosen is not None and chosen.instance == target
    spec = drill_spec(FleetSpec(fleet.prom.url), chosen, [], set())
    dashboard = prepare_dashboard(spec)
    try:
        async with dashboard.app.run_test(size=(160, 48)) as pilot:
            for _ in range(200):
                m = dashboard.app.state.metrics.last
                if m is not None and m.accept_len:
                    break
                await pilot.pause(0.05)
            m = dashboard.app.state.metrics.last
            assert m is not None and m.engine == "sglang"
    finally:
        dashboard.close()


async def test_enter_drills_in_with_metrics_from_prometheus_only(fleet: Fleet) -> None:
    """Enter on the vLLM row, its own address taken as unreachable: the drilled dashboard's
    Metrics pane shows that instance's tok/s and accept length, read from Prometheus."""
    from eagle_tui.assembly.fleet import FleetSpec, drill_spec
    from eagle_tui.assembly.open import prepare_dashboard
    from eagle_tui.model.fleet.flags import FleetFilter
    from eagle_tui.model.views.figures import figures
    from eagle_tui.ui.fleet_app import FleetApp
    from eagle_tui.ui.widgets.metrics import MetricsPane

    target = fleet.sims["vllm"].target
    poller = fleet.poller()
    app = FleetApp(lambda: poller.snapshots(), filter=FleetFilter(text=target))
    async with app.run_test(size=(160, 30)) as pilot:
        for _ in range(200):
            if app.snapshot is not None and app._shown:
                break
            await pilot.pause(0.05)
        await pilot.press("enter")
    chosen = app.return_value
    assert chosen is not None and chosen.instance == target
    spec = drill_spec(FleetSpec(fleet.prom.url), chosen, [], set(), reachable=lambda _: False)
    assert spec.url is None and spec.prom_instance == target
    dashboard = prepare_dashboard(spec)
    try:
        async with dashboard.app.run_test(size=(160, 48)) as pilot:
            for _ in range(300):
                m = dashboard.app.state.metrics.last
                if m is not None and m.accept_len and m.gen_tps:
                    break
                await pilot.pause(0.05)
            await pilot.press("4")  # the Metrics pane in front: it redraws from the state
            await pilot.pause(0.3)
            state = dashboard.app.state
            m = state.metrics.last
            assert m is not None and m.engine == "vllm" and m.source == "prometheus"
            assert m.accept_len is not None and m.accept_len > 2.0
            figs = figures(state)
            assert figs.tok_s.source == figs.accept_len.source == "prometheus"
            assert state.live.health is not None and state.live.health.state == "ready"  # from up
            pane = dashboard.app.query_one(MetricsPane)
            for _ in range(100):  # the pane redraws on the app's next refresh
                text = pane.build(150).plain
                rows = {line.split()[0]: line for line in text.splitlines() if line.split()}
                if "prometheus" in rows.get("tok/s", "") + rows.get("accept", ""):
                    break
                await pilot.pause(0.05)
            assert "prometheus" in rows["tok/s"] and "prometheus" in rows["accept"], text
    finally:
        dashboard.close()


def test_a_stopped_instance_goes_down(fleet: Fleet) -> None:
    target = fleet.sims["doomed"].target
    wait_rows(fleet, lambda rows: target in rows and rows[target].up is True)
    fleet.sims["doomed"].stop()
    snap = wait_rows(fleet, lambda rows: rows[target].up is False, within_s=15)
    row = by_instance(snap)[target]
    assert row.state == "down or starting" and row.flags[0] == "down"
    assert row.engine == "sglang"  # remembered over the lookback


@pytest.mark.realserver
def test_real_servers_in_the_fleet(fleet: Fleet, real_server: Any, sglang_eagle3: Any) -> None:
    """The real vLLM and SGLang CPU servers (EAGLE-3) in the same Prometheus: their rows, and
    tok/s and accept length within 2 % of their own counters over the same window."""
    real_server.ready()
    sglang_eagle3.ready()
    servers = [("vllm", real_server.url), ("sglang", sglang_eagle3.url)]
    targets = {name: url.removeprefix("http://") for name, url in servers}
    fleet.set_targets([*(s.target for s in fleet.sims.values() if s.proc.poll() is None),
                       *targets.values()])
    errors: list[int] = []

    class Both(Load):
        def __init__(self) -> None:
            super().__init__([])
            self.parts = [Load([real_server.url], per_url=2, max_tokens=8, model="tiny-llama"),
                          Load([sglang_eagle3.url], per_url=2, max_tokens=8, native_sglang=True)]

        def start(self) -> Load:
            for part in self.parts:
                part.start()
            return self

        def stop(self) -> None:
            for part in self.parts:
                part.stop()
                errors.append(part.errors)

    warm = Both().start()
    try:
        wait_rows(fleet, lambda rows: all(
            (r := rows.get(t)) is not None and r.state == "serving" and r.accept_len
            for t in targets.values()), within_s=90, window="20s", only=set(targets.values()))
    finally:
        warm.stop()
    time.sleep(1.5)  # idle servers: the window starts quiet
    found = compare_over_a_window(
        fleet, [(name, url, targets[name]) for name, url in servers], REAL_WINDOW_S,
        load=lambda: Both().start())
    print({t: (r.as_dict(), tps, acc) for t, (r, tps, acc) in found.items()})
    assert not any(errors)
    for name, _ in servers:
        row, own_tok_s, own_accept = found[targets[name]]
        assert row.engine == name and row.up and row.model
        assert row.tok_s == pytest.approx(own_tok_s, rel=0.02), (name, row)
        assert row.accept_len == pytest.approx(own_accept, rel=0.02), (name, row)


REAL_LONG_TOKENS = 900  # under the CPU server's 1,024-token context; about a minute at accept 1


@pytest.mark.realserver
@pytest.mark.realserver_sglang
def test_real_misconfigured_sglang_flagged_within_a_minute_of_load(
        fleet: Fleet, sglang_command: Any, tmp_path: Path) -> None:
    """The real SGLang CPU server launched as the seed's misconfiguration (EAGLE with the
    EAGLE-3 draft), idle in the same Prometheus, then long requests: the fleet at its default
    window flags it within 60 s of the load's start, while no request has finished yet (its
    counters flat: the flag comes from the scheduler's gauge)."""
    port = free_port()
    argv, extra = sglang_command("EAGLE", port)
    env = {**os.environ, **extra}
    env.pop("PYTHONPATH", None)
    log = tmp_path / "misconf.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, cwd=tmp_path, start_new_session=True)
    url, target = f"http://127.0.0.1:{port}", f"127.0.0.1:{port}"
    others = [s.target for s in fleet.sims.values() if s.proc.poll() is None]
    load = Load([])
    try:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:  # bounded: the CPU server starts in a few minutes
            assert proc.poll() is None, log.read_text(errors="replace")[-3000:]
            try:
                if httpx.get(f"{url}/health", timeout=2.0, trust_env=False).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(1.0)
        else:
            raise AssertionError(f"not healthy in 600 s: {log.read_text(errors='replace')[-3000:]}")
        fleet.set_targets([*others, target])
        fleet.prom.wait_for(f'count_over_time(up{{instance="{target}"}}[1m]) >= 2', within_s=30)
        poller = FleetPoller(fleet.prom.url, interval=1.0, deadline_s=3.0)
        load = Load([url], per_url=2, max_tokens=REAL_LONG_TOKENS, native_sglang=True).start()
        started = time.monotonic()
        row, seen = until_flagged(poller, target, started)
        took = time.monotonic() - started
        print(f"real SGLang flagged {took:.1f} s after the load started: {seen[-1:]}")
        assert row is not None and "drafts_rejected" in row.flags, seen[-3:]
        assert took <= FLAG_WITHIN_S and "stalled" not in row.flags
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=30)
        load.stop()
        fleet.set_targets(others)


def test_prometheus_stopped_keeps_the_last_figures_marked_stale(fleet: Fleet) -> None:
    poller = fleet.poller()
    good = snapshot(poller)
    assert good.status == "ok" and good.rows
    fleet.prom.stop()
    started = time.monotonic()
    stale = snapshot(poller)
    assert time.monotonic() - started < 3.5  # the deadline, not a hang
    assert stale.status == "stale" and "unreachable" in " ".join(stale.errors)
    assert [r.instance for r in stale.rows] == [r.instance for r in good.rows]
    assert all(r.stale for r in stale.rows)
    assert [r.tok_s for r in stale.rows] == [r.tok_s for r in good.rows]
    assert stale.last_ok_t == good.t
