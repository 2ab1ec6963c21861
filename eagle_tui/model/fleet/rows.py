"""The fleet's records: one engine instance's row and one refresh's snapshot (built in
:mod:`.fleet`, flagged in :mod:`.fleet_flags`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field

from eagle_tui.model.record import Record, record

DOWN_OR_STARTING = "down or starting"


@record
class FleetRow(Record):
    """One engine instance. ``None`` = not known (not exported, or no traffic in the window)."""

    instance: str
    engine: str = "unknown"
    model: str = ""
    up: bool | None = None
    state: str = DOWN_OR_STARTING
    tok_s: float | None = None
    accept_len: float | None = None
    accept_rate: float | None = None
    per_position: tuple[float, ...] = ()
    spec: bool = False  # drafts (vLLM) or verify calls (SGLang) in the window
    # the active tier where the engine exports it: draft steps, draft tokens per verify step,
    # or the block of a block drafter
    spec_steps: int | None = None
    spec_draft_tokens: int | None = None
    spec_block: int | None = None
    running: int | None = None
    queued: int | None = None
    kv_usage: float | None = None
    ttft_p50: float | None = None
    ttft_p99: float | None = None
    itl_p50: float | None = None
    itl_p99: float | None = None
    restarts: int = 0
    gen_total: float | None = None
    window_s: float | None = None  # the rate window its rates were read over
    flags: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    stale: bool = False
    sleep_level: int | None = None  # asleep at this level (state "sleeping"), None: awake

    @property
    def state_text(self) -> str:
        """The state as shown: ``sleeping (level 1)`` for a sleeping instance."""
        if self.sleep_level is not None:
            return f"{self.state} (level {self.sleep_level})"
        return self.state

    @property
    def host(self) -> str:
        return instance_host(self.instance)

    def as_dict(self) -> dict[str, object]:
        """The headless ``--json`` entry (every field; floats rounded for reading)."""
        def r(v: float | None, nd: int = 3) -> float | None:
            return None if v is None else round(v, nd)

        return {
            "instance": self.instance, "host": self.host, "engine": self.engine,
            "model": self.model, "up": self.up, "state": self.state, "tok_s": r(self.tok_s, 2),
            "accept_len": r(self.accept_len), "accept_rate": r(self.accept_rate),
            "per_position": [round(v, 3) for v in self.per_position],
            "spec_steps": self.spec_steps, "spec_draft_tokens": self.spec_draft_tokens,
            "spec_block": self.spec_block,
            "running": self.running, "queued": self.queued, "kv_usage": r(self.kv_usage),
            "ttft_p50_s": r(self.ttft_p50, 4), "ttft_p99_s": r(self.ttft_p99, 4),
            "itl_p50_s": r(self.itl_p50, 4), "itl_p99_s": r(self.itl_p99, 4),
            "restarts": self.restarts, "generation_tokens": self.gen_total,
            "window_s": r(self.window_s),
            "flags": list(self.flags), "reasons": list(self.reasons), "stale": self.stale,
            "sleep_level": self.sleep_level,
        }


@record
class FleetSnapshot(Record):
    """One refresh: the rows and how Prometheus answered (``ok``, ``partial``, ``stale``)."""

    t: float
    rows: tuple[FleetRow, ...] = ()
    status: str = "ok"
    errors: tuple[str, ...] = ()
    last_ok_t: float | None = None
    latency_s: float | None = None
    sparks: Mapping[str, Mapping[str, tuple[float, ...]]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        return {"t": round(self.t, 3), "status": self.status, "errors": list(self.errors),
                "last_ok_t": None if self.last_ok_t is None else round(self.last_ok_t, 3),
                "latency_s": None if self.latency_s is None else round(self.latency_s, 4),
                "instances": [r.as_dict() for r in self.rows]}


def instance_host(instance: str) -> str:
    """``10.0.0.5:8000`` → ``10.0.0.5``; ``[::1]:8000`` → ``::1``; a bare name stays."""
    if instance.startswith("["):
        end = instance.find("]")
        return instance[1:end] if end > 0 else instance
    host, sep, port = instance.rpartition(":")
    return host if sep and port.isdigit() else instance
