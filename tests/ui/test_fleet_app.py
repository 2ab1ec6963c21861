"""The fleet screen (Pilot, scripted snapshots): rows, flags first, sort/filter keys, stale
status, Enter exits with the row to drill into, and the drill-down's dashboard spec."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from textual.widgets import DataTable, Static

from eagle_tui.assembly.fleet import FleetSpec, drill_spec
from eagle_tui.model.fleet.flags import apply_flags
from eagle_tui.model.fleet.snapshot import FleetRow, FleetSnapshot, build_snapshot
from eagle_tui.ui.fleet_app import FleetApp

FROZEN = 1_800_000_000.0


def fleet_rows() -> tuple[FleetRow, ...]:
    def row(inst: str, engine: str, tps: float, acc: float, **kw: object) -> FleetRow:
        return FleetRow(inst, engine, kw.pop("model", "llama-70b"), True, "serving",
                         # type: ignore[arg-type]
                        tok_s=tps, accept_len=acc, accept_rate=(acc - 1) / 3, spec=True,
                        running=4, queued=0, kv_usage=0.42, ttft_p50=0.08, ttft_p99=0.21,
                        itl_p50=0.011, itl_p99=0.03, **kw)  # type: ignore[arg-type]
    rows = [row("gpu-1:30000", "sglang", 412.0, 3.2), row("gpu-2:30000", "sglang", 405.5, 3.1),
            row("gpu-3:8000", "vllm", 230.1, 1.03), row("gpu-4:8000", "vllm", 398.0, 3.3),
            row("gpu-5:8000", "vllm", 401.2, 3.2, restarts=1),
            row("gpu-6:30000", "sglang", 120.0, 3.0, model="qwen-32b"),
            FleetRow("gpu-7:8000", "vllm", "llama-70b", False)]
    return tuple(apply_flags(rows))


def snap(status: str = "ok") -> FleetSnapshot:
    sparks = {"tok_s": {r.instance: (100.0, 200.0, 300.0, (r.tok_s or 0.0)) for r in fleet_rows()}}
    return FleetSnapshot(FROZEN, fleet_rows(), status, ("state: unreachable",)
                         if status != "ok" else (), FROZEN - 30, 0.012, sparks)


def scripted(*snaps: FleetSnapshot) -> AsyncIterator[FleetSnapshot]:
    async def gen() -> AsyncIterator[FleetSnapshot]:
        for s in snaps:
            yield s
            await asyncio.sleep(0)
        await asyncio.Event().wait()
    return gen()


def make(*snaps: FleetSnapshot) -> FleetApp:
    app = FleetApp(lambda: scripted(*snaps), prometheus="http://prom:9090",
                   clock=lambda: FROZEN)
    app.animation_level = "none"
    return app


def shown(app: FleetApp) -> list[str]:
    return [r.instance for r in app._shown]


async def test_rows_flags_first_and_keys() -> None:
    app = make(snap())
    async with app.run_test(size=(160, 30)) as pilot:
        for _ in range(100):
            if app.snapshot is not None:
                break
            await pilot.pause(0.01)
        table = app.query_one("#fleet-table", DataTable)
        assert table.row_count == 7
        assert shown(app)[:2] == ["gpu-7:8000", "gpu-3:8000"]  # down, then drafts rejected
        await pilot.press("f")  # any flag
        assert shown(app) == ["gpu-7:8000", "gpu-3:8000", "gpu-5:8000"]
        await pilot.press("f")  # down
        assert shown(app) == ["gpu-7:8000"]
        await pilot.press("escape")
        await pilot.press("slash", "q", "w", "e", "n", "enter")
        assert shown(app) == ["gpu-6:30000"]
        await pilot.press("escape")
        await pilot.press("s", "s", "s", "s")  # flags → instance → host → model → tok_s
        assert app.sort_key == "tok_s" and shown(app)[0] == "gpu-1:30000"
        await pilot.press("down", "enter")
    assert app.return_value is not None and app.return_value.instance == "gpu-2:30000"


async def test_stale_status_line_says_so() -> None:
    app = make(snap("stale"))
    async with app.run_test(size=(160, 30)) as pilot:
        for _ in range(100):
            if app.snapshot is not None:
                break
            await pilot.pause(0.01)
        status = app.query_one("#fleet-status", Static)
        text = str(status.render())
        assert "UNREACHABLE" in text and "30 s old" in text and status.has_class("-stale")
        await pilot.press("q")
    assert app.return_value is None


def test_drill_spec_uses_the_ssh_map_when_the_host_maps(tmp_path: Path) -> None:
    row = build_snapshot({"up": [({"instance": "10.0.0.5:8000"}, 1.0)], "engine_vllm": [
        ({"instance": "10.0.0.5:8000", "engine": "vllm", "model_name": "m"}, 1.0)]},
        [], 1.0).rows[0]
    spec = FleetSpec("http://prom:9090")
    plain = drill_spec(spec, row, [], set())
    assert plain.url == "http://10.0.0.5:8000" and not plain.ssh.dests
    mapped = drill_spec(spec, row, [("10.0.0.*", "ops@{host}")], set())
    assert mapped.ssh.dests == ("ops@10.0.0.5",)
    assert drill_spec(spec, row, [], {"10.0.0.5"}).ssh.dests == ("10.0.0.5",)


def test_status_line_says_slow() -> None:
    from dataclasses import replace

    from eagle_tui.model.fleet.flags import FleetFilter
    from eagle_tui.ui.fleet_format import status_line

    text = status_line(replace(snap(), latency_s=3.2), 7, "flags", FleetFilter(), "p", FROZEN)
    assert "SLOW (3.2 s" in str(text)
