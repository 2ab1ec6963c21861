"""The log's records: what the lines were (:class:`LogCounters`) and what its stats lines said
(:class:`LogStats`)."""

from __future__ import annotations

from dataclasses import field

from eagle_tui.model.events import DecodeStats, LogLine, SpecStats, SummaryProgress, UserMarker
from eagle_tui.model.record import Record, record
from eagle_tui.model.series import Series

RECENT_LINES = 20


@record
class LogCounters(Record):
    """How many lines, a short tail of them, the first error, the user's markers, and where an
    opened-at-its-end log begins.

    ``log_start`` is the byte where the in-memory tail begins and ``log_size`` the file's size
    then; ``lineno_base`` is the number of lines before it (an event's absolute line number is
    ``lineno + lineno_base``; None until counted: shown as "line ~"); ``summary`` the background
    summary of the bytes before it (None: none runs).
    """

    lines: int = 0  # log lines seen (max lineno)
    recent_lines: tuple[LogLine, ...] = ()
    first_error_line: int | None = None
    markers: tuple[UserMarker, ...] = ()
    log_start: int = 0
    log_size: int = 0
    lineno_base: int | None = 0
    summary: SummaryProgress | None = None


@record
class LogStats(Record):
    """The numbers of the log's stats lines (SGLang / vLLM), one series point per line."""

    accept_len: Series = field(default_factory=Series)
    gen_tps: Series = field(default_factory=Series)
    accept_rate: Series = field(default_factory=Series)
    per_position: tuple[float, ...] = ()
    # the work of each accept_len point, aligned with it (.acceptance): its weight and
    # weight × exact value, so a window's mean is Σwv/Σw, the counters' own ratio
    accept_w: Series = field(default_factory=Series)
    accept_wv: Series = field(default_factory=Series)
    # Σ weight and Σ weight × value over every interval of the run (the series keep the last
    # few hundred points only): the log's acceptance over the whole run
    run_w: float = 0.0
    run_wv: float = 0.0
    run_n: int = 0
    run_tps: float = 0.0  # Σ tok/s of the run's intervals that generated tokens, and their count
    run_tps_n: int = 0
    pp_window: tuple[tuple[float, tuple[float, ...]], ...] = ()  # (drafts, per-position rates)
    rank_owner: tuple[tuple[str, str], ...] = ()  # (DP group, the one TP rank whose lines count)
    dp_tps: tuple[tuple[str, float, float], ...] = ()  # (DP group, newest tok/s, when): summed
    client_hist: tuple[int, ...] = ()  # SpecHistogram counts, summed over the requests seen
    running: int | None = None
    queued: int | None = None
    kv_usage: float | None = None
    last_decode: DecodeStats | None = None
    last_spec: SpecStats | None = None
