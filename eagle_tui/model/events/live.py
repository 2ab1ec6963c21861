"""The live-source events: health, /metrics, /server_info, process, GPU and connection samples,
and the events the session and the history add."""

from __future__ import annotations

from typing import Literal

from eagle_tui.model.events.log import Engine, SpecConfig
from eagle_tui.model.events.startup import EngineTimings
from eagle_tui.model.record import Record, record

# --------------------------------------------------------------------------- live-source events


HealthState = Literal["no_listener", "starting", "ready", "error", "timeout", "unknown"]


@record
class HealthSample(Record):
    """One readiness poll (``/health`` or the engine's no-work path): its state, HTTP status
    and latency, or the error; ``path`` is the path asked (without its query)."""

    state: HealthState
    t: float
    status_code: int | None = None
    latency_s: float | None = None
    error: str = ""
    path: str = ""


def idle_reading(running: int | None, gen_tps: float | None, queued: int | None) -> bool:
    """A stats line's or scrape's figures of a server with no work: no request running, none
    queued, no tokens made (its gauges then hold the last busy interval's values)."""
    return running == 0 and not gen_tps and not queued


@record
class MetricsSample(Record):
    """Windowed values from ``/metrics`` (counters already turned into rates by the scraper)."""

    t: float
    engine: Engine = "unknown"
    gen_tps: float | None = None
    accept_len: float | None = None
    acceptance_rate: float | None = None
    per_position: tuple[float, ...] = ()
    running: int | None = None
    queued: int | None = None
    kv_usage: float | None = None
    counter_reset: bool = False
    skipped: str = ""  # a note: values of this scrape that could not be represented (not read)
    # where the figures were read: the server's own ``/metrics``, or Prometheus' stored series
    # of it (``"prometheus"``: the fleet's drill-down, ``watch --prometheus``); the Metrics pane
    # names it after each figure
    source: str = "/metrics"
    # the run's lifetime counters as this scrape read them (name, value): the run's totals
    # (:mod:`eagle_tui.model.runtotals`), not its window
    counters: tuple[tuple[str, float], ...] = ()
    # the startup durations the engine's own gauges report (once it is up)
    startup: EngineTimings | None = None
    # the engine's active speculative tier where it says (an adaptive engine changes it while
    # it serves): draft steps, draft tokens per verify step, and a block drafter's mean verify
    # window and uncapped block accept length per verify step
    spec_steps: int | None = None
    spec_draft_tokens: int | None = None
    spec_cap_len: float | None = None
    spec_block_accept_len: float | None = None
    # the engine's sleep gauge: asleep or not and the level (None: no such gauge scraped)
    asleep: bool | None = None
    sleep_level: int | None = None


@record
class RankLoads(Record):
    """Each data-parallel rank's accept length as the server's load endpoint gives it (a
    lifetime average per rank: ``(rank, accept length)``), and its running requests."""

    t: float
    accept: tuple[tuple[int, float], ...] = ()
    running: tuple[tuple[int, int], ...] = ()


@record
class ServerInfo(Record):
    """What the server reports about itself (``/get_server_info``, ``/version``)."""

    t: float
    spec: SpecConfig | None = None
    avg_accept_len: float | None = None
    model_name: str | None = None
    memory_gb: tuple[tuple[str, float], ...] = ()
    version: str | None = None
    # decode steps between two stats lines (the server's own setting; None: it does not say)
    decode_log_interval: int | None = None
    startup: EngineTimings | None = None  # the startup durations it measured itself


@record
class DraftConfig(Record):
    """What the draft checkpoint's ``config.json`` says about itself (EAGLE-3 markers)."""

    path: str
    architectures: tuple[str, ...] = ()
    is_eagle3: bool = False
    hidden_size: int | None = None
    target_hidden_size: int | None = None
    aux_layer_ids: tuple[int, ...] = ()


# ("paused": a paused container, its processes frozen)
ProcessStatus = Literal["running", "sleeping", "paused", "zombie", "exited", "not_found",
                        "unknown"]


@record
class ProcessSample(Record):
    """The server process (tree) at one instant: status, RSS, CPU, child count."""

    t: float
    pid: int
    status: ProcessStatus
    name: str = ""
    rss_bytes: int | None = None
    cpu_percent: float | None = None
    started: float | None = None
    num_procs: int = 1
    # for telling loading, compiling and hung apart (model/activity.py): bytes the tree has read
    # so far (the larger of read() bytes and disk reads, which count mmap faults), and its pids
    # (to find its GPU memory in the GPU samples' process lists)
    read_bytes: int | None = None
    pids: tuple[int, ...] = ()


@record
class ProcessExited(Record):
    """The watched server process ended: its exit code, or the signal that killed it."""

    t: float
    pid: int
    exit_code: int | None = None
    signal: int | None = None
    # the host's memory when the exit was seen (bytes; None where it could not be read): a
    # SIGKILL is most often the kernel's OOM killer, and this is what the user checks first
    mem_available: int | None = None
    mem_total: int | None = None
    # a container's run (``container``: its name): what its engine said of the end, for the
    # crash's wording (model/containers/states.py)
    container: str = ""
    oom_killed: bool = False
    memory_limit: int | None = None
    restarts: int = 0
    restart_policy: str = ""  # "on-failure:5", "always", ... ('' none)
    since: float | None = None  # when the container was created (epoch s): a loop's window


@record
class StopRequested(Record):
    """The user stopped the run from eagle-tui (``K``, ``R``, a relaunch; ``action`` says which)
    at ``t``: its exit, lost health and the engine's death lines are the stop, not a failure."""

    t: float
    action: str = "stop"


@record
class GpuProcess(Record):
    """A process holding GPU memory, as NVML or nvidia-smi lists it."""

    pid: int
    name: str = ""
    used_bytes: int | None = None


@record
class GpuInfo(Record):
    """One GPU at one instant. ``None`` in a field means "not supported / N/A", never an error."""

    index: int
    name: str = ""
    uuid: str = ""
    mem_used: int | None = None  # bytes
    mem_total: int | None = None  # bytes
    util_gpu: float | None = None  # percent
    util_mem: float | None = None
    power_w: float | None = None
    power_limit_w: float | None = None
    temp_c: float | None = None
    sm_mhz: float | None = None
    processes: tuple[GpuProcess, ...] = ()
    host: str = ""
    error: str = ""


GpuState = Literal["ok", "no_driver", "error", "unknown", "off"]  # off: --gpu none


@record
class GpuSample(Record):
    """Every GPU of one host at one instant, or the state that explains why none."""

    t: float
    state: GpuState
    gpus: tuple[GpuInfo, ...] = ()
    error: str = ""
    host: str = ""
    backend: str = ""  # "nvml" | "nvidia-smi"


@record
class DownloadSample(Record):
    """Model files being downloaded: the Hugging Face cache's ``blobs/*.incomplete`` files."""

    t: float
    files: int
    bytes: int
    repos: tuple[str, ...] = ()
    root: str = ""
    host: str = ""


@record
class SourceFailed(Record):
    """A source stopped working; it retries in ``retry_in_s`` (``None``: gives up)."""

    source: str
    error: str
    t: float
    attempt: int = 1
    retry_in_s: float | None = None


@record
class SourceRecovered(Record):
    """A source that had failed works again."""

    source: str
    t: float


@record
class ConnectionState(Record):
    """Transport state (SSH): ``connected``, ``reconnecting`` (with attempt/error), ``failed``."""

    host: str
    state: str
    t: float
    attempt: int = 0
    error: str = ""


@record
class Tick(Record):
    """Clock event so elapsed times and staleness advance with no other input."""

    t: float


@record
class Baseline(Record):
    """A known non-speculative tok/s to compare against (``--baseline``, demo's 90 tok/s)."""

    tok_s: float
    source: str = "user"


@record
class UserMarker(Record):
    """A marker line the user put into the log view (``m``)."""

    lineno: int
    t: float
    label: str = ""


@record
class UsualTimes(Record):
    """How long each phase usually takes: the median of earlier runs of the same model and
    flags on the same host (``phases``: ``(phase value, seconds)``), from the run history."""

    phases: tuple[tuple[str, float], ...]
    runs: int


@record
class PreviousRun(Record):
    """The run this one replaced (a relaunch from the dashboard: ``R``/``E``), kept on screen
    for comparison: its label, figures and time to ready as the run history summarised them."""

    label: str
    accept_len: float | None = None
    tok_s: float | None = None
    ready_s: float | None = None
    crash: str = ""
