"""``eagle-tui fleet --headless`` / ``--json``: one refresh, as text lines or one JSON object.

Pure functions of a :class:`~eagle_tui.model.fleet.snapshot.FleetSnapshot`; the loop that prints
them is the command's. Text: a status line, then one line per instance (flags first, so a ``grep``
for ``drafts_rejected`` finds the misconfigured servers).
"""

from __future__ import annotations

import json
import time

from eagle_tui.headless.lines import clean
from eagle_tui.model.fleet.snapshot import FleetRow, FleetSnapshot
from eagle_tui.model.views.tier import Tier

SLOW_S = 2.0  # a refresh this long is said: the figures are that much older than they look


def _f(v: float | None, fmt: str) -> str:
    return "-" if v is None else format(v, fmt)


def status_text(snap: FleetSnapshot) -> str:
    at = time.strftime("%H:%M:%S", time.localtime(snap.t))
    up = sum(1 for r in snap.rows if r.up)
    flagged = sum(1 for r in snap.rows if r.flags)
    text = f"{at} fleet: {len(snap.rows)} instances, {up} up, {flagged} flagged"
    if snap.latency_s is not None:
        text += f", refresh {snap.latency_s * 1000:.0f} ms"
        if snap.latency_s >= SLOW_S:
            text += " (Prometheus SLOW)"
    if snap.status != "ok":
        since = ""
        if snap.last_ok_t is not None:
            since = f", figures from {time.strftime('%H:%M:%S', time.localtime(snap.last_ok_t))}"
        text += f" — PROMETHEUS {snap.status.upper()}{since}: " + "; ".join(snap.errors[:3])
    return clean(text)


def row_text(r: FleetRow) -> str:
    flags = ",".join(r.flags) or "ok"
    accept = _f(r.accept_len, ".2f")
    text = (f"  {flags:<16} {r.instance:<22} {r.engine:<7} {r.state_text:<16} "
            f"tok/s {_f(r.tok_s, '.1f'):>7} accept {accept:>5} "
            f"run {_f(r.running, 'd'):>3} queue {_f(r.queued, 'd'):>3} "
            f"kv {_f(None if r.kv_usage is None else 100 * r.kv_usage, '.0f'):>3}% "
            f"ttft p99 {_f(r.ttft_p99, '.3f')} s  {r.model}")
    tier = Tier(r.spec_steps, r.spec_draft_tokens, r.spec_block, True).text()
    if tier:  # the engine's active tier, where it exports one
        text += f"  [tier {tier}]"
    if r.stale:
        text += "  (stale)"
    return clean(text)


def snapshot_lines(snap: FleetSnapshot) -> list[str]:
    return [status_text(snap), *(row_text(r) for r in snap.rows)]


def snapshot_json(snap: FleetSnapshot) -> str:
    return json.dumps(snap.as_dict(), separators=(",", ":"))


__all__ = ["row_text", "snapshot_json", "snapshot_lines", "status_text"]
