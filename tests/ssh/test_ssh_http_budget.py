"""The HTTP budget holds through the SSH tunnel too (issue 17, item 3): a drip is a timeout
within the deadline, a flood stops at the cap (the direct-tcpip channel reads are cancelled)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from eagle_tui.sim.hostile import HostileServer
from eagle_tui.sources.health import HealthPoller
from eagle_tui.sources.metrics import MetricsError, MetricsScraper

pytestmark = pytest.mark.sshd


@pytest.fixture
def hostile() -> Iterator[HostileServer]:
    with HostileServer(drip_s=0.2, max_conn_s=30.0) as srv:
        yield srv


async def test_drip_and_flood_through_ssh(sshd: Any, hostile: HostileServer) -> None:
    async with sshd.transport() as t:
        hostile.set_mode("drip")
        poller = HealthPoller(t, hostile.url, timeout=1.0, max_polls=1)
        t0 = time.monotonic()
        samples = [s async for s in poller.events()]
        assert time.monotonic() - t0 < 3.0
        assert [s.state for s in samples] == ["timeout"]
        for mode in ("huge", "endless"):
            hostile.set_mode(mode)
            scraper = MetricsScraper(t, hostile.url, timeout=5.0, max_polls=1)
            t0 = time.monotonic()
            with pytest.raises(MetricsError, match=r"larger than|more than"):
                _ = [s async for s in scraper.events()]
            assert time.monotonic() - t0 < 5.0
        hostile.set_mode("ok")
        ok = [s async for s in HealthPoller(t, hostile.url, max_polls=1).events()]
        assert ok[0].state == "ready"
