"""Source options shared by ``wait``, ``watch`` (and ``demo``/the dashboard), and the one place
that turns them into a :class:`~eagle_tui.session.Session`.

Keeping the wiring here means every command watches a server the same way: ``--log`` tails and
parses the log, ``--url`` polls ``/health``, scrapes ``/metrics`` and reads ``/server_info``,
``--pid`` (or the process found on the URL's port / holding the log) is watched for exit, and GPUs
are sampled with NVML locally or ``nvidia-smi -lms`` elsewhere.
"""

from __future__ import annotations

import argparse
import os
import socket
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from eagle_tui.commands.remote import SshUsageError, add_ssh_args, check_ssh_args
from eagle_tui.model.events import Baseline, SpecConfig
from eagle_tui.model.windows import own_path

if TYPE_CHECKING:  # sources are imported by build_sources, for the sources asked for
    from eagle_tui.session import Session
    from eagle_tui.sources.base import Source
    from eagle_tui.transport.base import Transport

GPU_CHOICES = ("auto", "nvml", "smi", "none")
_LOCAL_HOSTS = {"127.0.0.1", "localhost", "0.0.0.0", "::1", "::", ""}


class UsageError(ValueError):
    """Bad command-line input: the command prints it and exits 2."""


def positive_float(text: str) -> float:
    """argparse type for speeds, rates and baselines: a number > 0, with a one-line error."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0: {text!r}")
    return value


def _pid(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a process id: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"not a process id: {text!r}")
    return value


def add_source_args(parser: argparse.ArgumentParser) -> None:
    """Add ``--log --url --pid --record --baseline --draft-config --gpu`` to ``parser``."""
    g = parser.add_argument_group("what to watch (at least one of --log, --url, --pid)")
    g.add_argument("--log", metavar="PATH", help="server log file to follow (may not exist yet)")
    g.add_argument("--url", metavar="URL",
                   help="server base URL, e.g. http://127.0.0.1:30000 (/health, /metrics, ...)")
    g.add_argument("--pid", metavar="PID", type=_pid, help="server process id to watch")
    g.add_argument("--record", metavar="FILE", type=Path,
                   help="record every event to FILE (JSON lines) for replay")
    g.add_argument("--baseline", metavar="TOKS_PER_S", type=positive_float,
                   help="non-speculative tok/s to compare against")
    g.add_argument("--draft-config", metavar="PATH",
                   help="draft model directory or config.json (default: from the log/server)")
    g.add_argument("--gpu", choices=GPU_CHOICES, default="auto",
                   help="GPU sampling: NVML locally, nvidia-smi remotely (default: auto)")
    add_ssh_args(parser)


def normalize_url(url: str) -> str:
    """``127.0.0.1:8000``, ``http://h:8000/``, ``http://h:8000/health`` → ``http://h:8000``."""
    text = url.strip()
    if not text:
        raise UsageError("--url is empty")
    if "://" not in text:
        text = "http://" + text
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"--url must be an http(s) URL like http://127.0.0.1:30000, not {url!r}")
    try:
        _ = parts.port
    except ValueError:
        raise UsageError(f"--url has an invalid port: {url!r}") from None
    path = parts.path.rstrip("/")
    if path.endswith("/health"):
        path = path[: -len("/health")]
    return f"{parts.scheme}://{parts.netloc}{path}"


def url_port(url: str) -> int:
    parts = urlsplit(url)
    return parts.port or (443 if parts.scheme == "https" else 80)


def is_local_host(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    if host in _LOCAL_HOSTS:
        return True
    try:
        names = {socket.gethostname().lower(), socket.getfqdn().lower()}
    except OSError:
        names = set()
    return host in names


def health_decides(args: argparse.Namespace, transport_host: str = "") -> bool:
    """Whether ``/health`` (given, or discovered from ``--pid``) decides readiness."""
    return bool(args.url) or (args.pid is not None and transport_host == "")


def check_source_args(args: argparse.Namespace) -> None:
    """Raise :class:`UsageError` unless the options describe something to watch."""
    if not (getattr(args, "log", None) or getattr(args, "url", None) or getattr(args, "pid", None)):
        raise UsageError("give at least one of --log PATH, --url URL, --pid PID")
    if args.url:
        args.url = normalize_url(args.url)
    if args.log and not getattr(args, "ssh", None) and os.path.isdir(args.log):
        raise UsageError(f"--log {args.log}: is a directory")
    if args.record is not None and args.record.is_dir():
        raise UsageError(f"--record {args.record}: is a directory")
    try:
        check_ssh_args(args)
    except SshUsageError as exc:
        raise UsageError(str(exc)) from None


def build_sources(
    args: argparse.Namespace,
    transport: Transport,
    spec_provider: Callable[[], SpecConfig | None] | None = None,
    *,
    health_interval: float = 1.0,
    other_hosts: Sequence[Transport] = (),
) -> list[Source]:
    """Sources for ``transport``; ``other_hosts`` (multi-node ``--ssh``) add their log and GPUs.

    Each source's module (httpx, prometheus_client, psutil, pynvml behind them) is imported
    here, only when that source is wanted: the dashboard's first frame does not wait for them.
    """
    from eagle_tui.sources.connection import ConnectionSource, HasConnectionEvents
    from eagle_tui.sources.draftconfig import DraftConfigSource

    sources: list[Source] = []
    local = transport.host == ""
    if args.log:
        from eagle_tui.sources.logtail import LogTail

        sources.append(LogTail(transport, args.log))
        sources.extend(LogTail(tr, args.log, name=f"log {tr.host}") for tr in other_hosts)
    if args.url or (args.pid is not None and local):
        from eagle_tui.sources.health import READY_INTERVAL_S, HealthPoller, listening_urls
    if args.url:
        from eagle_tui.sources.metrics import MetricsScraper
        from eagle_tui.sources.serverinfo import ServerInfoSource

        # our own polls carry a mark their access lines show: the log view folds them
        sources.append(HealthPoller(transport, args.url, interval=health_interval,
                                    ready_interval=READY_INTERVAL_S, path=own_path("/health")))
        sources.append(MetricsScraper(transport, args.url, path=own_path("/metrics")))
        sources.append(ServerInfoSource(transport, args.url))
    elif args.pid is not None and local:
        # --pid alone: find the server's HTTP port among the ports its process tree listens on
        pid = args.pid
        sources.append(HealthPoller(transport, None, discover=lambda: listening_urls(pid),
                                    interval=health_interval, ready_interval=READY_INTERVAL_S,
                                    path=own_path("/health")))
    port = url_port(args.url) if args.url and is_local_host(args.url) else None
    if args.pid is not None or port is not None or args.log:
        if local:
            from eagle_tui.sources.process import ProcessWatcher

            sources.append(ProcessWatcher(args.pid, port=port, log_path=args.log))
        else:  # over SSH: ps and /proc on the host ("localhost" in --url is the host itself)
            from eagle_tui.sources.remote_process import RemoteProcessWatcher

            sources.append(RemoteProcessWatcher(transport, args.pid, port=port,
                                                log_path=args.log))
    if args.draft_config or args.log or args.url:
        sources.append(
            DraftConfigSource(transport, args.draft_config, spec_provider=spec_provider)
        )
    gpu = getattr(args, "gpu", "auto")
    if gpu != "none":
        from eagle_tui.sources.gpu import NvmlSampler, SmiStream
        from eagle_tui.sources.multihost import MergedGpu
    if gpu == "nvml" or (gpu == "auto" and local):
        sources.append(NvmlSampler())
    elif other_hosts and gpu in ("smi", "auto"):
        sources.append(MergedGpu([(tr.host, SmiStream(tr, name=f"gpu {tr.host}"))
                                  for tr in (transport, *other_hosts)]))
    elif gpu == "smi" or gpu == "auto":
        sources.append(SmiStream(transport))
    sources.extend(ConnectionSource(tr) for tr in (transport, *other_hosts)
                   if isinstance(tr, HasConnectionEvents))
    return sources


def build_session(
    args: argparse.Namespace,
    transport: Transport | Sequence[Transport] | None = None,
    *,
    health_interval: float = 1.0,
    batch_interval: float = 0.05,
) -> Session:
    """The session for these options (call :func:`check_source_args` first).

    ``transport`` may be a list (one per ``--ssh`` host): the first serves ``--url``.
    """
    from eagle_tui.session import Session
    from eagle_tui.transport.local import LocalTransport

    check_source_args(args)
    if isinstance(transport, Sequence):
        if not transport:
            raise ValueError("build_session needs at least one transport")
        tr, others = transport[0], list(transport[1:])
    else:
        tr, others = (transport if transport is not None else LocalTransport()), []
    holder: list[Session] = []

    def current_spec() -> SpecConfig | None:
        return holder[0].state.spec if holder else None

    sources = build_sources(args, tr, current_spec, health_interval=health_interval,
                            other_hosts=others)
    session = Session(sources, record=args.record, batch_interval=batch_interval)
    holder.append(session)
    if args.baseline:
        session.post(Baseline(args.baseline, "user"))
    return session


__all__ = [
    "GPU_CHOICES",
    "UsageError",
    "add_source_args",
    "build_session",
    "build_sources",
    "check_source_args",
    "health_decides",
    "normalize_url",
]
