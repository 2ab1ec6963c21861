"""``eagle-tui bench``'s window: its markers, ``/metrics`` at both ends, the log's figures over it,
and where it is kept (the run history's ``windows`` column).

The markers themselves are the model's (:mod:`eagle_tui.model.bench.windows`): this module only
sends them. ``/metrics`` is read with eagle-tui's own mark (``/metrics?eagle-tui``), so the two
scrapes fold with the dashboard's polls rather than count as load.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eagle_tui.files import open_regular
from eagle_tui.model.bench.benchfiles import counter_totals, metrics_figures
from eagle_tui.model.bench.windows import (
    BenchWindow,
    WindowTracker,
    client_totals,
    last_interval,
    marker_query,
    own_path,
)

if TYPE_CHECKING:
    import httpx

    from eagle_tui.commands.bench_result import BenchResult

MARKER_TIMEOUT_S = 5.0
LOG_WAIT_S = 15.0  # vLLM logs the window's tail one stats interval (VLLM_LOG_STATS_INTERVAL) later
SGLANG_LOG_WAIT_S = 2.0
HEAD_BYTES = 4 << 20  # SGLang logs nothing once decoding stops: only lines in flight


def new_bench_id() -> str:
    return secrets.token_hex(4)


async def marker_path(client: httpx.AsyncClient) -> str:
    """Where the markers go: the first path that does no work and is there (asked with
    eagle-tui's own mark: SGLang's ``/health`` would run a generation inside the window)."""
    import httpx

    from eagle_tui.model.engines.readiness import MISSING, quiet_paths
    from eagle_tui.sources.http_budget import HEALTH_MAX_BYTES, HttpBudgetError, get_bounded

    paths = quiet_paths()
    for path in paths:
        try:
            resp = await get_bounded(client, own_path(path), deadline_s=MARKER_TIMEOUT_S,
                                     max_bytes=HEALTH_MAX_BYTES)
        except (httpx.HTTPError, HttpBudgetError):
            return path  # not answering: the load's own result says why
        if resp.status_code not in MISSING:
            return path
    return paths[-1]


async def send_marker(client: httpx.AsyncClient, bench_id: str, at: str, path: str = "/health",
                      **numbers: int) -> float:
    """``GET PATH?eagle-tui-bench=ID&at=AT&t=T...`` (``path`` from :func:`marker_path`);
    returns T. A marker the server refuses (or never answers) still bounds the window on the
    client's clock: only the log loses it."""
    import httpx

    from eagle_tui.sources.http_budget import HEALTH_MAX_BYTES, HttpBudgetError, get_bounded

    t = time.time()
    try:
        await get_bounded(client, f"{path}?{marker_query(bench_id, at, t=t, **numbers)}",
                          deadline_s=MARKER_TIMEOUT_S, max_bytes=HEALTH_MAX_BYTES)
    except (httpx.HTTPError, HttpBudgetError):
        pass  # the load's own result says whether the server is there
    return t


async def counters(client: httpx.AsyncClient) -> dict[str, float] | None:
    """The lifetime counters now, or None where ``/metrics`` is not there (SGLang without
    ``--enable-metrics``) or not answering."""
    import httpx

    from eagle_tui.sources.http_budget import METRICS_MAX_BYTES, HttpBudgetError, get_bounded

    try:
        resp = await get_bounded(client, own_path("/metrics"), deadline_s=MARKER_TIMEOUT_S,
                                 max_bytes=METRICS_MAX_BYTES)
    except (httpx.HTTPError, HttpBudgetError):
        return None
    return counter_totals(resp.text) if resp.status_code == 200 else None


def _read_from(path: Path, offset: int) -> list[str]:
    with open_regular(path) as fh:
        fh.seek(offset)
        data = fh.read()
    return data.decode("utf-8", "replace").splitlines()


def log_interval(path: Path) -> tuple[int, str] | None:
    """SGLang's ``decode_log_interval`` from its ``server_args`` line (or the launch command
    echoed into the log) near the log's start, and where it was read."""
    with open_regular(path) as fh:
        head = fh.read(HEAD_BYTES).decode("utf-8", "replace")
    return last_interval(head)


def log_window(path: Path, bench_id: str, offset: int = 0) -> BenchWindow | None:
    """The window ``bench_id`` as the log at ``path`` (from byte ``offset``) shows it."""
    from eagle_tui.model.ingest.parser import LogParser

    parser = LogParser()
    tracker = WindowTracker()
    if offset and (interval := log_interval(path)) is not None:
        tracker.set_interval(*interval)  # (a line before the offset says it)
    for line in _read_from(path, offset):
        tracker.feed(parser.feed_line(line))
    tracker.feed(parser.finish())
    return next((w for w in reversed(tracker.windows) if w.bench_id == bench_id), None)


async def wait_for_log_window(path: Path, bench_id: str, offset: int) -> BenchWindow | None:
    """Poll the log until the window is sealed (its tail interval logged), bounded."""
    deadline = time.monotonic() + LOG_WAIT_S
    started = time.monotonic()
    while True:
        w = await asyncio.to_thread(log_window, path, bench_id, offset)
        if w is not None and w.sealed:
            return w
        sglang = w is not None and w.sums.sglang
        if time.monotonic() >= deadline or (sglang and time.monotonic() - started
                                            > SGLANG_LOG_WAIT_S):
            return w
        await asyncio.sleep(0.5)


def window_dict(result: BenchResult, t_start: float, t_end: float,
                before: dict[str, float] | None, after: dict[str, float] | None,
                log: BenchWindow | None) -> dict[str, Any]:
    """The window as ``bench --json``, ``runs show`` and the history keep it."""
    duration = t_end - t_start if t_end > t_start else None
    figures: list[dict[str, Any]] = []
    if log is not None:
        figures.append(log.log_figures().as_dict())
    if before is not None and after is not None:
        m = metrics_figures(before, after, duration)
        if m is not None:
            figures.append(m.as_dict())
    client = client_totals(result.tokens, result.events, result.ok, result.verify, duration)
    figures.append(client.as_dict())
    return {"id": result.bench_id, "url": result.url, "t_start": t_start, "t_end": t_end,
            "duration_s": duration, "requests": result.ok, "figures": figures}


def save_window(window: dict[str, Any], url: str, run_ref: str | None) -> str | None:
    """Append the window to its run in the history: ``run_ref``, else the newest run on ``url``
    that has not ended. Returns the run's label, or None when no run matches."""
    from eagle_tui.history.store import RunStore

    store = RunStore()
    if run_ref:
        rec = store.get(run_ref)
    else:
        runs = [r for r in store.list(demo=None) if r.url and r.url.rstrip("/") == url
                and r.ended is None]
        if not runs:
            return None
        rec = runs[-1]
    store.update(rec.id, windows=[*(rec.windows or []), window])
    return rec.label


def format_window(window: dict[str, Any]) -> list[str]:
    """The window's figures side by side, one line per source."""
    requests = window.get("requests")
    lines = [f"  window {window['id']}: {window.get('duration_s') or 0:.1f} s"
             + (f", {requests} requests" if isinstance(requests, int) else "")]
    for f in window.get("figures", []):
        accept = f"{f['accept_len']:.2f}" if f.get("accept_len") is not None else "n/a"
        tps = f"{f['tok_s']:.1f}" if f.get("tok_s") is not None else "n/a"
        note = f"  ({f['note']})" if f.get("note") else ""
        lines.append(f"    {f['source']:<9} accept {accept:>5}  tok/s {tps:>8}{note}")
    return lines


__all__ = ["counters", "format_window", "log_window", "marker_path", "new_bench_id",
           "save_window", "send_marker", "wait_for_log_window", "window_dict"]
