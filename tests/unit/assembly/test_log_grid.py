"""Which session reads a local log on the repaint grid: the dashboard's, never a headless one's
(a headless command prints each line as it comes, so a short phase is never skipped)."""

from __future__ import annotations

import asyncio
import io
from typing import Any

import pytest

from eagle_tui.assembly import open as open_mod
from eagle_tui.assembly import remote
from eagle_tui.assembly.spec import DashboardSpec
from eagle_tui.transport.local import LocalTransport


class _Opened(Exception):
    pass


def _recording(seen: list[bool]) -> Any:
    async def open_transports(*_a: Any, screen: bool = False, **_k: Any) -> Any:
        seen.append(screen)
        raise _Opened

    return open_transports


def test_headless_reads_as_lines_come(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []
    monkeypatch.setattr(remote, "open_transports", _recording(seen))
    with pytest.raises(_Opened):
        spec = DashboardSpec(log="x.log", headless=True)
        asyncio.run(open_mod.run_headless(spec, None, (), io.StringIO(), io.StringIO()))
    assert seen == [False]


def test_the_dashboard_reads_on_its_grid(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []
    monkeypatch.setattr(remote, "open_transports", _recording(seen))
    with pytest.raises(_Opened):
        open_mod.prepare_dashboard(DashboardSpec(log="x.log"))
    assert seen == [True]


@pytest.mark.parametrize("screen", [False, True])
def test_the_grid_is_the_transports(screen: bool) -> None:
    from eagle_tui.assembly.spec import SshSpec

    (t,) = remote.make_transports(SshSpec(), screen=screen)
    assert isinstance(t, LocalTransport)
    assert (t.stream_interval > t.poll_interval) is screen
