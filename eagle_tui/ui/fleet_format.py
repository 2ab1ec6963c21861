"""Cells and the status line of the fleet screen (rich ``Text``; styles passed in by the app).

Kept apart from the app so each cell's words are unit-tested without a terminal. Numbers use
the dashboard's conventions: ``-`` for unknown, tok/s to one decimal, accept length to two,
sparklines from ``/api/v1/query_range`` (tok/s over the last points) in eighth-blocks.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from rich.text import Text

from eagle_tui.model.fleet.flags import FleetFilter
from eagle_tui.model.fleet.snapshot import FleetRow, FleetSnapshot
from eagle_tui.ui.safety import inert

COLUMNS: tuple[tuple[str, str], ...] = (
    ("flags", "flags"), ("instance", "instance"), ("engine", "engine"), ("state", "state"),
    ("tok/s", "tok_s"), ("trend", "spark"), ("accept", "accept_len"), ("rate", "accept_rate"),
    ("run", "running"), ("queue", "queued"), ("kv", "kv"), ("ttft p50/p99", "ttft"),
    ("itl p50/p99", "itl"), ("rst", "restarts"), ("model", "model"),
)
BLOCKS = " ▁▂▃▄▅▆▇█"
SPARK_WIDTH = 12
SLOW_S = 2.0  # a refresh this long is said (the figures are that much older than they look)


def sparkline(values: Sequence[float], width: int = SPARK_WIDTH) -> str:
    vals = [v for v in values if v == v][-width:]
    if not vals:
        return ""
    top = max(vals)
    if top <= 0:
        return BLOCKS[1] * len(vals)
    return "".join(BLOCKS[max(1, min(8, round(8 * v / top)))] for v in vals)


def _num(v: float | None, fmt: str) -> str:
    return "-" if v is None else format(v, fmt)


def _ms(v: float | None) -> str:
    return "-" if v is None else f"{v * 1000:.0f}"


def cells(r: FleetRow, sparks: Mapping[str, Mapping[str, tuple[float, ...]]],
          styles: Mapping[str, str], severity: str) -> list[Text]:
    """One row's cells; flags in the severity's style, a stale row muted throughout."""
    base = styles["stale"] if r.stale else ""
    flag_style = styles[severity] if r.flags else styles["ok"]
    text: list[str | Text] = [
        Text(inert(" ".join(r.flags) or "ok"), style=flag_style),
        r.instance, r.engine, r.state_text + (" (stale)" if r.stale else ""),
        _num(r.tok_s, ".1f"), sparkline(sparks.get("tok_s", {}).get(r.instance, ())),
        _num(r.accept_len, ".2f"), _num(r.accept_rate, ".2f"),
        _num(r.running, "d"), _num(r.queued, "d"),
        "-" if r.kv_usage is None else f"{100 * r.kv_usage:.0f}%",
        f"{_ms(r.ttft_p50)}/{_ms(r.ttft_p99)} ms", f"{_ms(r.itl_p50)}/{_ms(r.itl_p99)} ms",
        str(r.restarts), r.model,
    ]
    return [t if isinstance(t, Text) else Text(inert(t), style=base) for t in text]


def status_line(snap: FleetSnapshot, shown: int, sort: str, filt: FleetFilter,
                prometheus: str, now: float) -> Text:
    up = sum(1 for r in snap.rows if r.up)
    flagged = sum(1 for r in snap.rows if r.flags)
    parts = [f"{prometheus or 'Prometheus'}: {len(snap.rows)} instances, {up} up, "
             f"{flagged} flagged"]
    if shown != len(snap.rows):
        parts.append(f"{shown} shown")
    filters = [f"{k}={v}" for k, v in (("flag", filt.flag), ("model", filt.model),
                                        ("host", filt.host), ("text", filt.text)) if v]
    parts.append(f"sort {sort}" + (f", {' '.join(filters)}" if filters else ""))
    if snap.latency_s is not None:
        parts.append(f"refresh {snap.latency_s * 1000:.0f} ms")
    line = Text(inert(" · ".join(parts)))
    if snap.latency_s is not None and snap.latency_s >= SLOW_S:
        line.append(f"  Prometheus SLOW ({snap.latency_s:.1f} s a refresh)", style="bold")
    if snap.status != "ok":
        age = "" if snap.last_ok_t is None else f" — figures {now - snap.last_ok_t:.0f} s old"
        what = "UNREACHABLE or failing" if snap.status == "stale" else "PARTIAL answer"
        line.append(inert(f"  Prometheus {what}{age}: {'; '.join(snap.errors[:2])}"), style="bold")
    else:
        line.append(f"  updated {time.strftime('%H:%M:%S', time.localtime(snap.t))}")
    return line


__all__ = ["COLUMNS", "cells", "sparkline", "status_line"]
