"""What ``bench`` measured: one run's client-side figures (and its window's, source by source)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class BenchResult:
    url: str
    model: str
    endpoint: str
    concurrency: int
    max_tokens: int
    requests_planned: int
    ok: int = 0
    failed: int = 0
    wall_s: float = 0.0
    tokens: int = 0
    tok_s: float = 0.0
    per_request_tok_s_p50: float | None = None
    ttft_p50_s: float | None = None
    ttft_p90_s: float | None = None
    itl_p50_s: float | None = None
    itl_p90_s: float | None = None
    tokens_per_event: float | None = None
    tokens_estimated: bool = False
    timed_out: bool = False
    errors: list[str] = field(default_factory=list)
    events: int = 0
    verify: int = 0
    bench_id: str = ""
    window: dict[str, Any] | None = None  # the window's figures, source by source

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
