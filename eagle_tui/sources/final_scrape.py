"""One bounded ``/metrics`` scrape of a run's server: the final counters ``stop``, ``K``/``R``/``E``
and ``runs`` read before a run ends (or for a run nobody watched after ready), so its figures
are the server's own over the whole run. Every failure is a one-line note, never an exception.
"""

from __future__ import annotations

import asyncio
import time

import httpx

from eagle_tui.sources.http_budget import METRICS_MAX_BYTES, HttpBudgetError, get_bounded
from eagle_tui.sources.metrics import MetricsError, Snapshot, parse_metrics
from eagle_tui.transport.base import Transport, TransportError

FINAL_TIMEOUT_S = 3.0


async def final_scrape(transport: Transport, base_url: str, *,
                       timeout: float = FINAL_TIMEOUT_S) -> tuple[Snapshot | None, str]:
    """``(snapshot, "")``, or ``(None, why not)`` within ``timeout`` seconds."""
    try:
        async with asyncio.timeout(timeout + 1.0):
            async with transport.http_client(base_url, timeout) as client:
                resp = await get_bounded(client, "/metrics", deadline_s=timeout,
                                         max_bytes=METRICS_MAX_BYTES)
    except (httpx.HTTPError, httpx.InvalidURL, HttpBudgetError, TransportError, OSError,
            TimeoutError, ValueError) as exc:  # (the URL is the history's: anyone may edit it)
        return None, f"no /metrics answer from {base_url} ({type(exc).__name__}: {exc})"[:300]
    if resp.status_code != 200:
        return None, f"/metrics of {base_url} answered HTTP {resp.status_code}"
    try:
        return parse_metrics(resp.text, time.time()), ""
    except MetricsError as exc:
        return None, str(exc)[:300]


__all__ = ["FINAL_TIMEOUT_S", "final_scrape"]
