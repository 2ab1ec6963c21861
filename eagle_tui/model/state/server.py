"""The server's records: what it is configured to run (:class:`ServedConfig`) and what its
``/metrics`` said (:class:`ServerMetrics`)."""

from __future__ import annotations

from dataclasses import field

from eagle_tui.model.events import (
    DraftConfig,
    MetricsSample,
    ModelInfo,
    RankLoads,
    ServerInfo,
    SpecConfig,
)
from eagle_tui.model.record import Record, record
from eagle_tui.model.runtotals import CounterRun
from eagle_tui.model.series import Series


@record
class ServedConfig(Record):
    """The speculative config, the draft's config.json, the models and the hidden dims seen."""

    spec: SpecConfig | None = None
    draft_config: DraftConfig | None = None
    models: tuple[ModelInfo, ...] = ()
    # distinct dims seen, in order of first sight: the first MAX_HIDDEN_DIMS - 1 and the latest
    hidden_dims: tuple[int, ...] = ()
    server_info: ServerInfo | None = None
    # the draft steps an adaptive server last moved to, as its log said (None: it said none)
    active_steps: int | None = None


@record
class ServerMetrics(Record):
    """``/metrics``' series and newest sample, and the baseline tok/s to compare with."""

    gen_tps: Series = field(default_factory=Series)
    accept_len: Series = field(default_factory=Series)
    acceptance_rate: float | None = None
    per_position: tuple[float, ...] = ()
    last: MetricsSample | None = None
    baseline_tok_s: float | None = None
    run: CounterRun = field(default_factory=CounterRun)  # the counters over the whole run
    # the per-rank load answers: the newest and the one before it (a collapse is judged on two)
    ranks: RankLoads | None = None
    ranks_before: RankLoads | None = None
