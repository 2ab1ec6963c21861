"""Flags of fleet rows, and the sort and filter of the fleet table (pure).

The flags are the single-server alert rules (:mod:`.alerts`) read from Prometheus' figures:

* ``drafts_rejected`` — drafts are being verified (vLLM drafts/s > 0, SGLang verify calls/s > 0
  or its accept-length gauge on a busy server) and the accept length is ≤ 1.10 (raised for a
  longer active tier, :mod:`.tier`): the EAGLE-3 draft launched as EAGLE, the one failure no
  log line reports (same threshold as the alert);
* ``down`` — Prometheus cannot scrape it (``up == 0``);
* ``stalled`` — requests are running and no token came out in the window;
* ``below_median`` — tok/s under half the median of its peers (same engine, model and spec
  on/off, at least :data:`MIN_PEERS` serving), or accept length under 3/4 of theirs: the
  fleet-scale version of "below baseline";
* ``restarted`` — a counter reset (or a new process start time) in the lookback.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import replace

from eagle_tui.model.fleet.rows import FleetRow
from eagle_tui.model.record import Record, record
from eagle_tui.model.views.tier import BASE_DRAFTS, Tier, thresholds

FLAG_ORDER = ("down", "drafts_rejected", "stalled", "below_median", "restarted")
FLAG_SEVERITY = {"down": "critical", "drafts_rejected": "critical", "stalled": "critical",
                 "below_median": "warning", "restarted": "warning"}
MIN_PEERS = 3
SLOW_FRACTION = 0.5
ACCEPT_FRACTION = 0.75
SORT_KEYS = ("flags", "instance", "host", "model", "tok_s", "accept_len", "state")


def _peer_key(row: FleetRow) -> tuple[str, str, bool, int]:
    return (row.engine, row.model, row.spec, len(row.per_position))


def _own_flags(row: FleetRow) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    if row.up is False:
        out.append(("down", "Prometheus cannot scrape it (up == 0)"))
    tier = Tier(row.spec_steps, row.spec_draft_tokens, row.spec_block, True)
    low = thresholds(tier)[0]
    if row.spec and row.accept_len is not None and row.accept_len <= low:
        of = f" for {tier.text()}" if tier.drafts and tier.drafts > BASE_DRAFTS else ""
        out.append(("drafts_rejected",
                    f"accept length {row.accept_len:.2f} ≤ {low:.2f}{of} with drafts "
                    "being verified: check the draft model and the speculative algorithm"))
    if row.up and (row.running or 0) > 0 and row.tok_s is not None and row.tok_s <= 0.0:
        out.append(("stalled", f"{row.running} requests running and no tokens in the window"))
    if row.restarts > 0:
        out.append(("restarted", f"restarted {row.restarts}× in the lookback"))
    return out


def _below_median(row: FleetRow, tps_med: float | None,
                  acc_med: float | None) -> tuple[str, str] | None:
    if row.state != "serving":
        return None
    if tps_med and row.tok_s is not None and row.tok_s < SLOW_FRACTION * tps_med:
        return ("below_median", f"{row.tok_s:.1f} tok/s, fleet median {tps_med:.1f} for "
                f"{row.model or row.engine}")
    if acc_med and row.accept_len is not None and row.accept_len < ACCEPT_FRACTION * acc_med:
        return ("below_median", f"accept length {row.accept_len:.2f}, fleet median "
                f"{acc_med:.2f} for {row.model or row.engine}")
    return None


def _median(values: Iterable[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if len(vals) >= MIN_PEERS else None


def apply_flags(rows: Sequence[FleetRow]) -> list[FleetRow]:
    """Every row with its flags and their reasons (flags in :data:`FLAG_ORDER`)."""
    peers: dict[tuple[str, str, bool, int], list[FleetRow]] = {}
    for r in rows:
        if r.state == "serving":
            peers.setdefault(_peer_key(r), []).append(r)
    medians = {k: (_median(r.tok_s for r in g), _median(r.accept_len for r in g))
               for k, g in peers.items()}
    out = []
    for r in rows:
        found = _own_flags(r)
        slow = _below_median(r, *medians.get(_peer_key(r), (None, None)))
        if slow:
            found.append(slow)
        found.sort(key=lambda f: FLAG_ORDER.index(f[0]))
        out.append(replace(r, flags=tuple(f for f, _ in found),
                           reasons=tuple(m for _, m in found)))
    return out


def flag_rank(row: FleetRow) -> int:
    """0 = most severe flag first; rows without flags last."""
    return min((FLAG_ORDER.index(f) for f in row.flags), default=len(FLAG_ORDER))


def sort_rows(rows: Iterable[FleetRow], key: str = "flags",
              reverse: bool = False) -> list[FleetRow]:
    """Sorted by one of :data:`SORT_KEYS`; numbers highest first, unknowns (``None``) last."""
    if key not in SORT_KEYS:
        raise ValueError(f"unknown sort key {key!r}; one of {', '.join(SORT_KEYS)}")
    items = list(rows)
    if key in ("tok_s", "accept_len"):
        known = sorted((r for r in items if getattr(r, key) is not None),
                       key=lambda r: (-getattr(r, key), r.instance))
        return known + sorted((r for r in items if getattr(r, key) is None),
                              key=lambda r: r.instance)
    if key == "flags":
        items.sort(key=lambda r: (flag_rank(r), r.instance))
    else:
        items.sort(key=lambda r: (str(getattr(r, key)), r.instance))
    return items[::-1] if reverse else items


@record
class FleetFilter(Record):
    """Rows to show: with this flag (``"any"``: any flag), model and host substrings, and
    ``text`` found in any of instance, host or model (the screen's ``/`` box)."""

    flag: str | None = None
    model: str | None = None
    host: str | None = None
    text: str | None = None

    def keep(self, row: FleetRow) -> bool:
        if self.flag == "any" and not row.flags:
            return False
        if self.flag not in (None, "any") and self.flag not in row.flags:
            return False
        if self.model and self.model.lower() not in row.model.lower():
            return False
        if self.text and not any(self.text.lower() in s.lower()
                                 for s in (row.instance, row.model)):
            return False
        return not (self.host and self.host.lower() not in row.host.lower())

    def apply(self, rows: Iterable[FleetRow]) -> list[FleetRow]:
        return [r for r in rows if self.keep(r)]


__all__ = [
    "FLAG_ORDER",
    "FLAG_SEVERITY",
    "SORT_KEYS",
    "FleetFilter",
    "apply_flags",
    "flag_rank",
    "sort_rows",
]
