"""The one place that turns a :class:`DashboardSpec` into sources and a :class:`Session`.

Keeping the wiring here means every command watches a server the same way: ``log`` tails and
parses the log, ``url`` polls the engine's readiness path that does no work (``/health`` where
that is all), scrapes ``/metrics`` and reads ``/server_info`` (``prometheus``: the metrics, and
without ``url`` the readiness, from Prometheus instead),
``pid`` (or the process found on the URL's port / holding the log) is watched for exit, and GPUs
are sampled with NVML locally or ``nvidia-smi -lms`` elsewhere. A replay spec is one
:class:`~eagle_tui.sources.replay.ReplaySource` on a session without a live ticker.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from eagle_tui.assembly.spec import DashboardSpec, is_local_host, url_port
from eagle_tui.model.bench.windows import own_path
from eagle_tui.model.buffers.limits import DEFAULT_MAX_LINES
from eagle_tui.model.events import Baseline, SpecConfig
from eagle_tui.model.views.ticks import QUIET_TICK_S

if TYPE_CHECKING:  # sources are imported by build_sources, for the sources asked for
    from collections.abc import AsyncIterator

    from eagle_tui.model.events import Event, LogOpened
    from eagle_tui.model.fold.prefix import PrefixSummary
    from eagle_tui.session import Session, Summarizer
    from eagle_tui.sources.base import Source
    from eagle_tui.transport.base import Transport



def build_sources(
    spec: DashboardSpec,
    transport: Transport,
    spec_provider: Callable[[], SpecConfig | None] | None = None,
    *,
    other_hosts: Sequence[Transport] = (),
    ready_provider: Callable[[], bool] | None = None,
    engine_provider: Callable[[], str | None] | None = None,
) -> list[Source]:
    """Sources for ``transport``; ``other_hosts`` (multi-node ``--ssh``) add their log and GPUs.

    Each source's module (httpx, prometheus_client, psutil, pynvml behind them) is imported
    here, only when that source is wanted: the dashboard's first frame does not wait for them.
    """
    from eagle_tui.sources.connection import ConnectionSource, HasConnectionEvents
    from eagle_tui.sources.draftconfig import DraftConfigSource

    sources: list[Source] = []
    local = transport.host == ""
    if spec.log:
        from eagle_tui.sources.logtail import FROM_END, LogTail

        # the end first (the lines before it are the session's background summary's); the
        # other hosts' logs are read whole, as before
        sources.append(LogTail(transport, spec.log, offset=spec.log_offset, from_end=FROM_END))
        sources.extend(LogTail(tr, spec.log, name=f"log {tr.host}") for tr in other_hosts)
    if spec.container:
        from eagle_tui.sources.containers.logs import ContainerLog

        sources.append(ContainerLog(transport, spec.container, cli=spec.container_cli))
    if spec.url or (spec.pid is not None and local):
        from eagle_tui.model.engines.readiness import ReadinessChoice
        from eagle_tui.sources.health import READY_INTERVAL_S, HealthPoller, listening_urls
        from eagle_tui.sources.hold import HoldWatch

        # readiness from the engine's path that does no work (found once per server)
        engine = engine_provider or (lambda: None)
        choice = ReadinessChoice(engine)
    if spec.url:
        from eagle_tui.sources.metrics import MetricsScraper
        from eagle_tui.sources.serverinfo import ServerInfoSource

        # our own polls carry a mark their access lines show: the log view folds them
        sources.append(HealthPoller(transport, spec.url, interval=spec.health_interval,
                                    ready_interval=READY_INTERVAL_S, choice=choice,
                                    mark=own_path, hold=HoldWatch(engine, mark=own_path)))
        if not spec.prometheus:
            sources.append(MetricsScraper(transport, spec.url, path=own_path("/metrics")))
        sources.append(ServerInfoSource(transport, spec.url))
        from eagle_tui.sources.loads import LoadsSource

        sources.append(LoadsSource(transport, spec.url, engine=engine_provider or (lambda: None)))
    elif spec.pid is not None and local:
        # pid alone: find the server's HTTP port among the ports its process tree listens on
        pid = spec.pid
        sources.append(HealthPoller(transport, None, discover=lambda: listening_urls(pid),
                                    interval=spec.health_interval,
                                    ready_interval=READY_INTERVAL_S, choice=choice,
                                    mark=own_path, hold=HoldWatch(engine, mark=own_path)))
    if spec.prometheus and spec.prom_instance:
        # Prometheus is asked from here (not through the SSH connection); without the
        # instance's own URL its readiness comes from ``up`` as well
        from eagle_tui.sources.prom_metrics import PromMetricsSource

        sources.append(PromMetricsSource(spec.prometheus, spec.prom_instance,
                                         health=not spec.url))
    port = url_port(spec.url) if spec.url and is_local_host(spec.url) else None
    if spec.container:
        # the container's state says how its processes end (a process watcher beside it would
        # take the listener on the port for another run)
        from eagle_tui.sources.containers.cli import ContainerCli
        from eagle_tui.sources.containers.state import ContainerStateSource

        program = spec.container_cli if spec.container_cli != "auto" else "docker"
        sources.append(ContainerStateSource(ContainerCli(transport, program), spec.container))
    elif spec.pid is not None or port is not None or spec.log:
        if local:
            from eagle_tui.sources.process import ProcessWatcher

            sources.append(ProcessWatcher(spec.pid, port=port, log_path=spec.log,
                                          follow_restarts=spec.follow_restarts))
        else:  # over SSH: ps and /proc on the host ("localhost" in the URL is the host itself)
            from eagle_tui.sources.remote_process import RemoteProcessWatcher

            sources.append(RemoteProcessWatcher(transport, spec.pid, port=port,
                                                log_path=spec.log))
    if spec.pid is not None or spec.log:  # a model download shows as the startup's verdict
        from eagle_tui.sources.download import DownloadWatcher

        sources.append(DownloadWatcher(transport, interval=2.0 if local else 5.0,
                                       until=ready_provider))
    # a container's draft path is in its own file system: read only where it is given
    if spec.draft_config or spec.log or (spec.url and not spec.container):
        sources.append(
            DraftConfigSource(transport, spec.draft_config, spec_provider=spec_provider)
        )
    if spec.gpu != "none":
        from eagle_tui.sources.gpu import NvmlSampler, SmiStream
        from eagle_tui.sources.multihost import MergedGpu
    if spec.gpu == "nvml" or (spec.gpu == "auto" and local):
        sources.append(NvmlSampler())
    elif other_hosts and spec.gpu in ("smi", "auto"):
        sources.append(MergedGpu([(tr.host, SmiStream(tr, name=f"gpu {tr.host}"))
                                  for tr in (transport, *other_hosts)]))
    elif spec.gpu in ("smi", "auto"):
        sources.append(SmiStream(transport))
    else:
        from eagle_tui.sources.gpu import GpuOff

        sources.append(GpuOff())
    sources.extend(ConnectionSource(tr) for tr in (transport, *other_hosts)
                   if isinstance(tr, HasConnectionEvents))
    return sources


def summarizer(transport: Transport) -> Summarizer:
    """The session's background summary of a log opened at its end, on ``transport``'s host
    (:class:`~eagle_tui.sources.prefix.PrefixSummarizer`, imported when a big log is opened:
    not on the way to the first text)."""

    def summarize(opened: LogOpened) -> AsyncIterator[Event | PrefixSummary]:
        from eagle_tui.sources.prefix import PrefixSummarizer

        return PrefixSummarizer(transport).summarize(opened)

    return summarize


def build_session(
    spec: DashboardSpec,
    transport: Transport | Sequence[Transport] | None = None,
    *,
    batch_interval: float = 0.05,
) -> Session:
    """The session for ``spec`` (built by :func:`~eagle_tui.assembly.spec.spec_from_args` or
    checked by :func:`~eagle_tui.assembly.spec.check_sources`).

    ``transport`` may be a list (one per ``--ssh`` host): the first serves the URL. A replay
    spec needs none.
    """
    from eagle_tui.session import Session

    if spec.replay is not None:
        from eagle_tui.sources.replay import ReplaySource

        r = spec.replay
        from eagle_tui.sources.logtail import FROM_END
        from eagle_tui.transport.local import LocalTransport as Local

        source = ReplaySource(r.file, kind=r.kind, speed=r.speed,
                              visible_lines=spec.max_lines or DEFAULT_MAX_LINES,
                              from_end=FROM_END)
        # the recorded Tick events carry the recorded clock; a live ticker would mix in today's
        return Session([source], tick_interval=None,
                       summarizer=summarizer(Local()))
    from eagle_tui.transport.local import LocalTransport

    if isinstance(transport, Sequence):
        if not transport:
            raise ValueError("build_session needs at least one transport")
        tr, others = transport[0], list(transport[1:])
    else:
        tr, others = (transport if transport is not None else LocalTransport()), []
    holder: list[Session] = []

    def current_spec() -> SpecConfig | None:
        return holder[0].state.config.spec if holder else None

    def ready() -> bool:  # a ready server downloads nothing: the download watcher stops
        return bool(holder) and holder[0].state.startup.ready

    def engine() -> str | None:  # which engine's readiness path the health poller asks
        return holder[0].state.startup.engine if holder else None

    sources = build_sources(spec, tr, current_spec, other_hosts=others, ready_provider=ready,
                            engine_provider=engine)
    session = Session(sources, record=spec.record, batch_interval=batch_interval,
                      summarizer=summarizer(tr) if spec.log else None, quiet_tick=QUIET_TICK_S)
    holder.append(session)
    if spec.baseline:
        session.post(Baseline(spec.baseline, "user"))
    if spec.usual is not None:
        session.post(spec.usual)
    if spec.launched_spec is not None:
        session.post(spec.launched_spec)
    return session


__all__ = ["build_session", "build_sources", "summarizer"]
