"""The dashboard over SSH and across hosts: connection states, a link that drops, GPU groups per
host, switching the log between hosts, and a snapshot of a two-node run with one host down.

Everything is driven by scripted events through the real composition root (``make_app``), so
these are the frames a user sees when ``watch --ssh node-a --ssh node-b`` loses a link.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from textual.content import Content
from textual.pilot import Pilot

from eagle_tui.model.events import (
    ConnectionState,
    Event,
    GpuInfo,
    GpuProcess,
    GpuSample,
    LogLine,
    LogRestarted,
    SourceFailed,
    Tick,
)
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState
from eagle_tui.model.views import figures
from eagle_tui.ui.app import EagleApp
from eagle_tui.ui.config import UiConfig
from eagle_tui.ui.textual_private import screen_text
from eagle_tui.ui.widgets.connections import ConnectionList, connection_content
from eagle_tui.ui.widgets.gpus import GpuPane
from eagle_tui.ui.widgets.logpane import LogPane
from eagle_tui.ui.widgets.status import status_line
from tests.support.ui_helpers import make_app, settle
from tests.support.ui_scenarios import GIB, H200_TOTAL, LINK_ERROR, T0, two_hosts

WIDE = (160, 48)
# Rich markup, an OSC retitle, a screen clear and a newline, as a hostile sshd could send them
EVIL = "auth [bold]x[/] failed \x1b]0;pwned\x07\x1b[2J\nsecond line"


def test_connection_phrases_and_colours() -> None:
    def phrase(state: str, **kw: Any) -> tuple[str, set[str]]:
        c = connection_content(ConnectionState("gpu-box", state, T0, **kw))
        return c.plain, {str(span.style) for span in c.spans}

    text, styles = phrase("reconnecting", attempt=3, error="timed out")
    assert text == "gpu-box ⟳ reconnecting (attempt 3, last error: timed out)"
    assert "$warning bold" in styles
    assert phrase("connected", error="old news") == ("gpu-box ● connected", {"bold", "$success"})
    text, styles = phrase("failed", error="REMOTE HOST KEY CHANGED")
    assert text == "gpu-box ✗ failed (error: REMOTE HOST KEY CHANGED)" and "$error bold" in styles
    assert phrase("connecting")[0] == "gpu-box ◌ connecting"
    assert phrase("closed")[0] == "gpu-box ○ closed"
    assert phrase("teleporting")[0] == "gpu-box ? teleporting"  # a newer state never raises
    evil = connection_content(ConnectionState("h", "failed", T0, error=EVIL)).plain
    assert evil == "h ✗ failed (error: auth [bold]x[/] failed second line)"


def test_status_line_puts_a_down_host_first_and_keeps_it_at_80_columns() -> None:
    down = reduce(DashboardState(), two_hosts())
    wide = status_line(down, "node-a:/data/run.log", 160).plain
    assert "1:10  node-b ⟳ reconnecting (attempt 3, last error: connection to node-b lost" in wide
    assert "tok/s" in wide and len(wide) <= 160
    narrow = status_line(down, "node-a:/data/run.log", 80).plain
    assert len(narrow) <= 80
    assert "node-b ⟳ reconnecting (attempt 3)" in narrow and "tok/s" in narrow
    up = status_line(reduce(DashboardState(), two_hosts(down=None)), "", 160).plain
    assert "node-a ● connected  node-b ● connected" in up
    assert "connected" not in status_line(reduce(DashboardState(), [Tick(T0)]), "", 160).plain


def test_connections_keep_their_order_when_they_change() -> None:
    s = reduce(DashboardState(), [ConnectionState("b", "connected", 1.0),
                                  ConnectionState("a", "connected", 1.0),
                                  ConnectionState("b", "reconnecting", 2.0, attempt=1)])
    assert [(c.host, c.state) for c in s.live.connections] == [("b", "reconnecting"),
                                                          ("a", "connected")]


async def test_every_connection_state_renders_with_inert_errors() -> None:
    events: list[Event] = [
        Tick(T0),
        ConnectionState("gpu-a", "connected", T0),
        ConnectionState("gpu-b", "connecting", T0),
        ConnectionState("gpu-c", "reconnecting", T0, attempt=3, error=EVIL),
        ConnectionState("gpu-d", "failed", T0, error="REMOTE HOST KEY CHANGED"),
        ConnectionState("gpu-e", "closed", T0),
    ]
    app = make_app(events)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot, app)
        text = screen_text(app)
        status = text.splitlines()[0]
        assert "gpu-b ◌ connecting" in status
        assert "gpu-c ⟳ reconnecting (attempt 3)" in status  # 4 down hosts: errors don't fit
        assert "gpu-a ● connected" in status
        pane = app.query_one(ConnectionList)
        assert pane.display
        assert pane.render().plain.splitlines() == [
            " ssh gpu-a ● connected",
            " ssh gpu-b ◌ connecting",
            " ssh gpu-c ⟳ reconnecting (attempt 3)",
            "     last error: auth [bold]x[/] failed second…",  # cut to the pane's width
            " ssh gpu-d ✗ failed",
            "     error: REMOTE HOST KEY CHANGED",
            " ssh gpu-e ○ closed",
        ]
        tip = pane.tooltip  # ... and whole in the tooltip
        assert isinstance(tip, Content) and tip.plain.splitlines() == [
            "gpu-c: auth [bold]x[/] failed second line", "gpu-d: REMOTE HOST KEY CHANGED"]
    app = make_app(events)
    async with app.run_test(size=(80, 24)) as pilot:  # compact: the startup pane fills it
        await settle(pilot, app)
        text = screen_text(app)
        assert "ssh gpu-a ● connected" in text and "ssh gpu-e ○ closed" in text
        assert "last error: auth [bold]x[/] failed second line" in text  # markup as characters
        for bad in ("\x1b", "\x07", "pwned"):
            assert bad not in text


async def test_a_local_run_shows_no_connection_line() -> None:
    app = make_app([Tick(T0), LogLine(1, "hello")])
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot, app)
        assert not app.query_one(ConnectionList).display
        assert "connected" not in screen_text(app)
        assert app.log_view.hosts == () and "h Host" not in screen_text(app)


async def wait_for(pilot: Pilot[int], app: EagleApp, done: Callable[[], bool]) -> None:
    for _ in range(300):
        if done() and not app.render_pending:
            break
        await pilot.pause(0.01)
    await pilot.pause()


def _column(text: str, rows: range, cols: slice) -> list[str]:
    lines = text.splitlines()
    return [lines[y][cols] for y in rows]


async def test_reconnecting_keeps_metrics_gpus_and_log_on_screen() -> None:
    events = two_hosts(down=None)
    n_lines = sum(isinstance(e, LogLine) for e in events)
    app = make_app(events, hold=True)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot, app, expect_lines=n_lines)
        await wait_for(pilot, app, lambda: figures.tok_s(app.state).value is not None)
        before = screen_text(app)
        tok_s, log_rows = figures.tok_s(app.state).value, app.log_view.row_count
        t = app.state.clock.now or T0
        error = "connection to node-a lost: EOF"
        app.session.post(Tick(t + 1), ConnectionState("node-a", "reconnecting", t + 1, 2, error),
                         SourceFailed("health", error, t + 1, 2, 0.2),
                         SourceFailed("metrics", error, t + 1, 2, 0.2))
        await wait_for(pilot, app, lambda: any(
            c.state == "reconnecting" for c in app.query_one(ConnectionList).connections))
        after = screen_text(app)
        assert "node-a ⟳ reconnecting (attempt 2, last error: connection to node-a lost" in after
        assert figures.tok_s(app.state).value == tok_s
        assert f"{tok_s:.1f} tok/s" in after.splitlines()[0]
        assert app.log_view.line_count == n_lines and app.log_view.row_count == log_rows
        # the metrics pane, the GPU rows and the newest log rows are exactly as they were
        assert _column(before, range(2, 12), slice(53, 106)) == \
            _column(after, range(2, 12), slice(53, 106))
        gpu_rows = [ln for ln in _column(after, range(2, 13), slice(106, 160)) if "/140G" in ln]
        assert len(gpu_rows) == 8
        assert gpu_rows == [ln for ln in _column(before, range(2, 13), slice(106, 160))
                            if "/140G" in ln]
        newest = [ln for ln in before.splitlines() if "node-a [2025-" in ln][-5:]
        assert newest and all(ln in after for ln in newest)
        app.session.stop()


def _gpu(host: str, index: int, used_gib: float, pid: int) -> GpuInfo:
    return GpuInfo(index=index, name="NVIDIA H200", mem_used=int(used_gib * GIB),
                   mem_total=H200_TOTAL, util_gpu=50.0, power_w=300.0, temp_c=50.0, host=host,
                   processes=(GpuProcess(pid, f"sglang rank {host}/{index}", int(used_gib * GIB)),))


async def test_gpu_pane_groups_by_host_with_per_host_imbalance_and_selection() -> None:
    # node-a holds 60 GiB per GPU, node-b 20 (a different model share): not an imbalance;
    # node-b's GPU 2 at 40 GiB is, within its host
    gpus = tuple(_gpu("node-a", i, 60.0, 100 + i) for i in range(4)) + tuple(
        _gpu("node-b", i, 40.0 if i == 2 else 20.0, 200 + i) for i in range(4))
    app = make_app([Tick(T0), GpuSample(T0, "ok", gpus, backend="nvml")])
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot, app)
        pane = app.query_one(GpuPane)
        lines = pane.render().plain.splitlines()
        assert lines[0].startswith("8× NVIDIA H200 on 2 hosts  ⚠ memory imbalance")
        assert lines[1] == "─ node-a · 4 GPUs"
        assert lines[6] == "─ node-b · 4 GPUs  ⚠ imbalance"
        flagged = [ln.split()[0] for ln in lines[2:6] + lines[7:11] if "G!" in ln]
        assert flagged == ["2"] and "G!" in lines[9]
        await pilot.press("3")
        await pilot.press(*["down"] * 6)
        await pilot.pause()
        assert pane.selected == 5
        assert "└ pid 201" in pane.render().plain  # node-b's GPU 1, not node-a's
        await pilot.click(GpuPane, offset=(6, 1 + 7))  # node-b's GPU 0 (line 7 of the content)
        await pilot.pause()
        assert pane.selected == 4 and "└ pid 200" in screen_text(app)
        await pilot.click(GpuPane, offset=(6, 1 + 6))  # its host header: selects nothing
        await pilot.pause()
        assert pane.selected == 4


async def test_h_cycles_the_log_through_all_hosts_and_each_host() -> None:
    app = make_app(two_hosts(down=None), UiConfig(max_lines=60))
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot, app)
        view = app.log_view
        assert view.hosts == ("node-a", "node-b") and view.host is None
        assert view.line_count == 60  # the buffer stays bounded whatever is shown
        text = screen_text(app)
        assert "Log · all 2 hosts" in text and "all 2 hosts · ● following" in text
        assert "node-a [2025-" in text and "h Host" in text
        for host in ("node-a", "node-b", None):
            await pilot.press("h")
            await settle(pilot, app)
            assert view.host == host
            shown = [e.text for e in view.entries() if host is None or e.host == host]
            assert [view.row_text(y) for y in range(view.row_count)] == shown
            text = screen_text(app)
            if host is None:
                assert "Log · all 2 hosts" in text
            else:
                assert f"Log · {host}" in text and f"host {host} of 2 · ● following" in text
                assert "node-a [" not in text and "node-b [" not in text  # no tags for one
        assert view.line_count == 60


async def test_host_tags_follow_wrapping_and_a_jump_shows_its_host() -> None:
    lines: list[Event] = [Tick(T0)]
    for i in range(1, 4):
        lines.append(LogLine(i, f"a{i} " + "x" * 200, host="alice@node-a:2222"))
        lines.append(LogLine(i, f"b{i} short", host="node-b"))
    app = make_app(lines)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot, app)
        view = app.log_view
        await pilot.press("w")
        await settle(pilot, app)
        rows = screen_text(app).splitlines()
        first = next(r for r in rows if "node-a a1 " in r)
        assert rows[rows.index(first) + 1].startswith("│       x")  # continuation: blank tag
        await pilot.press("h", "h")  # node-b only
        await settle(pilot, app)
        assert view.host == "node-b" and view.row_count == 3
        assert view.jump_to_lineno(2) and view.cursor_lineno == 2  # node-b's own line 2
        assert view.host == "node-b"
        view.set_filter("a3")  # only on node-a: the filter hides all of node-b
        assert view.row_count == 0
        view.set_filter("")
        await pilot.press("h")
        await settle(pilot, app)
        assert view.host is None and view.status().hosts == 2


async def test_h_without_two_hosts_stays_out_of_the_footer_and_says_why() -> None:
    app = make_app([Tick(T0), LogLine(1, "one", host="gpu-box")])
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot, app)
        assert "h Host" not in screen_text(app)
        await pilot.press("h")
        assert app.log_view.host is None
        cmd = next(c for c in app.get_system_commands(app.screen) if c.title == "Host (h)")
        result = cmd.callback()
        if result is not None:
            await result
        await pilot.pause()
        assert any("one host only" in str(n.message) for n in app._notifications)
        assert app.query_one(LogPane).border_title == "Log"


async def test_a_restart_separator_belongs_to_its_host() -> None:
    events: list[Event] = [Tick(T0), LogLine(1, "a1", host="node-a"),
                           LogLine(1, "b1", host="node-b"),
                           LogRestarted("truncated", "node-b", T0 + 1),
                           LogLine(1, "b1 again", host="node-b")]
    app = make_app(events)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot, app)
        view = app.log_view
        view.set_host("node-a")
        assert [view.row_text(y) for y in range(view.row_count)] == ["a1"]
        view.set_host("node-b")
        texts = [view.row_text(y) for y in range(view.row_count)]
        assert texts[0] == "b1" and "✂ log truncated" in texts[1]


def test_snapshot_two_hosts_one_reconnecting(snap_compare: Any) -> None:
    app = make_app(two_hosts(), UiConfig(theme="eagle-dark"))
    app.animation_level = "none"

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot, app)

    assert snap_compare(app, terminal_size=WIDE, run_before=run_before)


def test_scenario_shapes() -> None:
    """The two-host script is what the tests above assume: merged samples, own line numbers."""
    events = two_hosts()
    samples = [e for e in events if isinstance(e, GpuSample)]
    assert {g.host for g in samples[0].gpus} == {"node-a", "node-b"}
    assert {g.host for g in samples[-1].gpus} == {"node-a"}
    assert samples[-1].error == f"node-b: {LINK_ERROR}"
    b_lines = [e.lineno for e in events if isinstance(e, LogLine) and e.host == "node-b"]
    assert b_lines == list(range(1, len(b_lines) + 1))


async def test_a_gpu_memory_step_reaches_the_gpu_pane_without_waiting_for_the_pane_timer() -> None:
    """Issue 15: a step (allocation, or a process's memory freed) is drawn at once; a sample
    whose memory did not move waits for the throttled pane update like every other number."""
    def sample(t: float, used_gib: float) -> GpuSample:
        return GpuSample(t, "ok", (GpuInfo(0, "H200", mem_used=int(used_gib * 2**30),
                                           mem_total=140 * 2**30, util_gpu=5.0),),
                         backend="nvml")

    first = sample(T0, 1.0)
    app = make_app([Tick(T0), first], hold=True)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        pane = app.query_one(GpuPane)
        assert pane.sample == first
        app._last_panes = time.monotonic()  # a pane update just happened: the next is throttled
        same = sample(T0 + 0.1, 1.01)
        app._on_batch(replace(app.state, gpu=replace(app.state.gpu, sample=same)), [same])
        assert pane.sample == first  # no step: waits for the pane timer
        step = sample(T0 + 0.2, 21.0)
        app._on_batch(replace(app.state, gpu=replace(app.state.gpu, sample=step)), [step])
        assert pane.sample is step  # drawn in this very batch
        await pilot.pause()
        assert "21.0/140G" in screen_text(app)


async def test_gpu_none_says_sampling_is_off_not_waiting() -> None:
    app = make_app([Tick(T0), GpuSample(T0, "off", error="GPU sampling is off (--gpu none)")])
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot, app)
        text = app.query_one(GpuPane).render().plain
        assert text == "GPU sampling is off (--gpu none)"
