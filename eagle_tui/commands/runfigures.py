"""A run's figures when nobody watched it to the end: its server's final counters and its log.

``launch --no-tui`` exits at ready, like ``wait``, so no dashboard records the figures of what
the server serves afterwards. The design (docs/architecture.md, "Module notes",
``commands/runfigures``): ``stop`` reads the run's final ``/metrics`` (one bounded scrape) before
it signals, and a recorded run that has no figures is completed when ``runs list/show/compare``
or ``--baseline-run`` reads it: a live local run by one bounded scrape, a local log file by the
report's reading of it (bounded in size). A run on an SSH host, a log gone or too big, a server
that does not answer: the run stays without figures and the reason is one line.
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any

from eagle_tui.history.records import FINAL_STATES
from eagle_tui.model.views.runsummary import with_counters, with_log, with_windows

if TYPE_CHECKING:
    from eagle_tui.history.records import RunRecord
    from eagle_tui.history.store import RunStore
    from eagle_tui.transport.base import Transport

LOG_MAX_BYTES = 256 << 20  # a log read for figures (the report's one pass, seconds at most)
REFRESH_TIMEOUT_S = 20.0


def lacks_figures(rec: RunRecord) -> bool:
    m = rec.metrics or {}
    return "accept_len" not in m or "tok_s_median" not in m


def live_here(rec: RunRecord) -> bool:
    """A run of this machine that has not ended: its server's counters can be read now."""
    return not rec.host and bool(rec.url) and rec.ended is None \
        and rec.state not in FINAL_STATES and rec.state != "crashed"


async def scraped(transport: Transport, rec: RunRecord,
                  metrics: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """``metrics`` with the acceptance of the server's counters now (one bounded scrape)."""
    from eagle_tui.sources.final_scrape import final_scrape
    from eagle_tui.sources.metrics import run_counters

    if not rec.url:
        return metrics, "no URL recorded"
    snap, note = await final_scrape(transport, rec.url)
    if snap is None:
        return metrics, note
    counters = dict(run_counters(snap))
    if not counters:
        return metrics, "its /metrics has no counters to read the acceptance from"
    return with_counters(metrics, snap.engine, counters), ""


def from_log(rec: RunRecord, metrics: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """``metrics`` completed from the run's local log file (the report's reading of it)."""
    from eagle_tui.files import NotRegularFileError, open_regular
    from eagle_tui.report import build_report, close

    path = rec.log_path
    if not path and rec.container:
        return metrics, "a container's log is its engine's, not kept in a file (the figures are " \
            "the dashboard's and the server's /metrics)"
    if not path:
        return metrics, "no log recorded"
    if rec.host:
        return metrics, f"its log is on {rec.host}"
    try:
        with open_regular(path) as f:
            size = os.fstat(f.fileno()).st_size
            if size > LOG_MAX_BYTES:
                return metrics, f"its log is {size >> 20} MiB (eagle-tui report reads it)"
            report = build_report(f, path)
    except NotRegularFileError as exc:
        return metrics, str(exc)
    except (OSError, ValueError) as exc:
        return metrics, f"its log cannot be read ({getattr(exc, 'strerror', None) or exc})"
    try:
        summary = report.get("summary") or {}
        tok_s = summary.get("gen_throughput_median")
        return with_log(metrics, report.get("numbers") or {},
                        float(tok_s) if isinstance(tok_s, int | float) else None), ""
    finally:
        close(report)


async def final_figures(transport: Transport, rec: RunRecord) -> tuple[dict[str, Any], str]:
    """The run's figures before it is stopped: its server's final counters, then its log for
    what they lack; the note says what could not be read when the acceptance is still missing."""
    metrics, note = await scraped(transport, rec, dict(rec.metrics or {}))
    notes = [note] if note else []
    if "accept_len" not in metrics or "tok_s_median" not in metrics:
        metrics, note = from_log(rec, metrics)
        if note:
            notes.append(note)
    metrics = with_windows(metrics, rec.windows or [])
    return metrics, "; ".join(notes) if "accept_len" not in metrics else ""


async def _refresh(rec: RunRecord) -> tuple[dict[str, Any], str]:
    from eagle_tui.transport.local import LocalTransport

    metrics, notes = dict(rec.metrics or {}), []
    if live_here(rec):
        transport = LocalTransport()
        try:
            metrics, note = await scraped(transport, rec, metrics)
        finally:
            await transport.close()
        if note:
            notes.append(note)
    if "accept_len" not in metrics or "tok_s_median" not in metrics:
        metrics, note = await asyncio.to_thread(from_log, rec, metrics)
        if note:
            notes.append(note)
    return with_windows(metrics, rec.windows or []), "; ".join(notes)


def refreshed(store: RunStore, rec: RunRecord) -> tuple[RunRecord, str]:
    """``rec`` with the figures it lacked (a live run of this machine: its counters now),
    written back; ``""`` or why some are still missing."""
    from eagle_tui.history.store import HistoryError

    if not lacks_figures(rec) and not live_here(rec):
        return rec, ""
    try:
        metrics, note = asyncio.run(asyncio.wait_for(_refresh(rec), REFRESH_TIMEOUT_S))
    except TimeoutError:
        return rec, f"no figures yet — reading them took over {REFRESH_TIMEOUT_S:g} s"
    if metrics != (rec.metrics or {}):
        try:
            store.update(rec.id, metrics=metrics)
            rec = store.get(str(rec.id))
        except HistoryError as exc:
            return rec, f"figures not recorded: {exc}"
    return rec, f"no figures yet — {note}" if lacks_figures(rec) and note else ""


def refresh_baseline(args: Any) -> None:
    """Before ``--baseline-run RUN`` is read (``watch``, ``wait``): complete that run's figures
    (an unknown run or an unusable history is left to the spec's own error)."""
    from eagle_tui.history.store import HistoryError, RunStore

    ref = getattr(args, "baseline_run", None)
    if not ref:
        return
    try:
        store = RunStore()
        refreshed(store, store.get(ref))
    except HistoryError:
        return


__all__ = ["final_figures", "from_log", "lacks_figures", "live_here", "refresh_baseline",
           "refreshed", "scraped"]
