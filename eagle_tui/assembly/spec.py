"""What a dashboard (or its headless presenter) watches, as one frozen value.

Every command that opens a dashboard (``watch``, ``replay``, ``demo``, and ``launch``/``attach``
to come) describes *what* to watch as a :class:`DashboardSpec` and hands it to
:func:`eagle_tui.assembly.open.open_dashboard`. The spec is built from the command line in one
place (:func:`spec_from_args`), validated there (a bad value is a :class:`UsageError` before
anything starts), and frozen, so no later stage can patch an ``argparse.Namespace`` on the way:
what the sources, the session and the app are built from is exactly what the user asked for.

Nothing here imports a source, a transport or Textual: building a spec is cheap and pure.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urlsplit

from eagle_tui.errors import UsageError
from eagle_tui.model.events import SpecConfig, UsualTimes

GPU_CHOICES = ("auto", "nvml", "smi", "none")
REPLAY_KINDS = ("auto", "record", "log")
HEALTH_INTERVAL_S = 0.5  # how often ``wait``/``watch``/``demo`` poll /health
_LOCAL_HOSTS = {"127.0.0.1", "localhost", "0.0.0.0", "::1", "::", ""}


@dataclass(frozen=True)
class SshSpec:
    """The ``--ssh`` hosts (in order: the first serves ``--url``) and how to reach them."""

    dests: tuple[str, ...] = ()
    identity_files: tuple[str, ...] = ()
    known_hosts_files: tuple[Path, ...] = ()
    accept_new_host_key: bool = False
    config_path: Path | None = None
    # the dests came from outside (a fleet label through --ssh-map), not from the user's
    # typing: they pass the grammar gate and Match exec is not evaluated for them
    outside: bool = False
    # one connection attempt (TCP, banner, key exchange, auth) must end within this; never
    # longer than the command's own --timeout/--duration
    connect_timeout: float = 10.0


@dataclass(frozen=True)
class ReplaySpec:
    """``replay FILE``: a record file or a finished raw log, paced by ``speed`` (None: at once)."""

    file: Path
    kind: str = "auto"
    speed: float | None = None


@dataclass(frozen=True)
class DashboardSpec:
    """Everything a dashboard is opened from; see the module docstring.

    A live server is described by ``log``/``url``/``pid`` (at least one) and ``ssh``; a replay
    by ``replay`` (then the live fields are unused). ``headless``/``json``/``duration`` ask for
    the printed progress lines instead of the dashboard; ``label`` is what the status line names
    (empty: derived from what is watched, see :meth:`source_label`).
    """

    log: str | None = None
    log_offset: int = 0  # where the watched run's lines begin in ``log`` (a launch's file)
    url: str | None = None
    pid: int | None = None
    # a docker/podman container (name or id) and the CLI that knows it ("auto": found)
    container: str | None = None
    container_cli: str = "auto"
    ssh: SshSpec = field(default_factory=SshSpec)
    draft_config: str | None = None
    baseline: float | None = None
    record: Path | None = None
    gpu: str = "auto"
    replay: ReplaySpec | None = None
    config_path: Path | None = None
    theme: str | None = None
    max_lines: int | None = None
    headless: bool = False
    json: bool = False
    duration: float | None = None
    label: str = ""
    health_interval: float = 1.0
    command: str = "watch"
    usual: UsualTimes | None = None  # earlier runs' phase times (the run history): ETA
    launched_spec: SpecConfig | None = None  # the launch command's speculative settings
    # the dashboard: a process found by port/log that exits is followed by the next server
    # started there (a new run), instead of ending the process watch
    follow_restarts: bool = False
    # metrics from Prometheus' stored series of one instance (``--prometheus URL --instance
    # INSTANCE``, the fleet's drill-down) instead of its own /metrics; without ``url`` its
    # readiness comes from Prometheus' ``up`` too
    prometheus: str | None = None
    prom_instance: str | None = None
    @property
    def is_remote(self) -> bool:
        return bool(self.ssh.dests)

    def health_decides(self, transport_host: str = "") -> bool:
        """Whether ``/health`` (given, or discovered from ``pid`` locally) decides readiness."""
        return bool(self.url or self.prometheus) or (
            self.pid is not None and transport_host == "")

    def source_label(self, host: str = "") -> str:
        """What the status line names: ``label``, else ``host:server.log``, a URL or a pid."""
        if self.label:
            return self.label
        if self.replay is not None:
            return f"replay {self.replay.file.name}"
        what = Path(self.log).name if self.log else (
            self.url or (f"pid {self.pid}" if self.pid else "")
            or (f"container {self.container}" if self.container else "")
            or (f"{self.prom_instance} (prometheus)" if self.prom_instance else ""))
        return f"{host}:{what}" if host and what else host or what


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
    import socket  # here: ``report`` and the other file commands load this module, never call this

    try:
        names = {socket.gethostname().lower(), socket.getfqdn().lower()}
    except OSError:
        names = set()
    return host in names


def ssh_spec_from_args(args: argparse.Namespace) -> SshSpec:
    """The ``--ssh`` options as an :class:`SshSpec` (checked by :func:`check_ssh`); a
    command's ``--timeout``/``--duration`` caps each connection attempt."""
    budgets = [b for b in (getattr(args, "timeout", None), getattr(args, "duration", None))
               if isinstance(b, int | float) and 0 < b < SshSpec.connect_timeout]
    return SshSpec(
        connect_timeout=float(min(budgets, default=SshSpec.connect_timeout)),
        dests=tuple(getattr(args, "ssh", None) or ()),
        identity_files=tuple(getattr(args, "identity", None) or ()),
        known_hosts_files=tuple(getattr(args, "known_hosts", None) or ()),
        accept_new_host_key=bool(getattr(args, "accept_new_host_key", False)),
        config_path=getattr(args, "ssh_config", None),
    )


def check_ssh(ssh: SshSpec) -> None:
    """Raise :class:`UsageError` unless the SSH options can work.

    Every DEST is resolved (``~/.ssh/config``) here, so a typo is a usage error before anything
    starts; nothing connects yet.
    """
    if not ssh.dests:
        if ssh.identity_files or ssh.known_hosts_files or ssh.accept_new_host_key:
            raise UsageError("--identity/--known-hosts/--accept-new-host-key need --ssh DEST")
        return
    if len(set(ssh.dests)) != len(ssh.dests):
        raise UsageError(f"the same --ssh host is given twice: {', '.join(ssh.dests)}")
    if ssh.config_path is not None:
        _check_regular(str(ssh.config_path), "--ssh-config ")  # (a FIFO: not "no such file")
        if not ssh.config_path.is_file():
            raise UsageError(f"--ssh-config {ssh.config_path}: no such file")
    for path in ssh.identity_files:
        _check_regular(str(Path(path).expanduser()), "--identity ")
        if not Path(path).expanduser().is_file():
            raise UsageError(f"--identity {path}: no such file")
    for kh in ssh.known_hosts_files:
        if kh.is_dir():
            raise UsageError(f"--known-hosts {kh}: is a directory")
    from eagle_tui.transport.ssh.config import DestinationError, resolve

    for dest in ssh.dests:
        try:
            resolve(dest, ssh.config_path, outside=ssh.outside)
        except DestinationError as exc:
            raise UsageError(str(exc)) from exc


def _check_regular(path: str, flag: str) -> None:
    """A FIFO, device, socket or directory given as a file is a usage error (exit 2), found
    before anything opens it (opening a FIFO blocks; ``/dev/zero`` never ends)."""
    from eagle_tui.transport.base import NotRegularFile
    from eagle_tui.transport.files import check_regular

    try:
        check_regular(path)
    except NotRegularFile as exc:
        raise UsageError(f"{flag}{exc}") from None


def check_sources(spec: DashboardSpec) -> DashboardSpec:
    """The spec with its URL normalized; :class:`UsageError` unless it names something to watch.

    Also the check for specs built in code (``demo``, tests): the same rules as the CLI's.
    """
    if spec.replay is not None:
        _check_regular(str(spec.replay.file), "")
        if not spec.replay.file.is_file():
            raise UsageError(f"{spec.replay.file}: no such file")
        if spec.replay.kind == "record":
            from eagle_tui.sources.replay import detect_format

            if detect_format(spec.replay.file) != "record":
                raise UsageError(f"{spec.replay.file}: not an eagle-tui record (its first line "
                                 "is neither a record's header nor an event); --kind log "
                                 "replays it as a raw log")
        return spec
    if bool(spec.prometheus) != bool(spec.prom_instance):
        raise UsageError("--prometheus URL and --instance INSTANCE go together")
    if not (spec.log or spec.url or spec.pid or spec.prometheus or spec.container):
        raise UsageError("give at least one of --log PATH, --url URL, --pid PID, "
                         "--container NAME (or --prometheus URL --instance INSTANCE)")
    if spec.container and spec.log:
        raise UsageError("--container and --log are two logs: give one")
    if spec.prometheus:
        prom = normalize_url(spec.prometheus)
        if prom != spec.prometheus:
            spec = replace(spec, prometheus=prom)
    url = normalize_url(spec.url) if spec.url else spec.url
    if spec.log and not spec.is_remote:
        _check_regular(spec.log, "--log ")
    if spec.record is not None and spec.record.is_dir():
        raise UsageError(f"--record {spec.record}: is a directory")
    if spec.gpu not in GPU_CHOICES:
        raise UsageError(f"--gpu must be one of {', '.join(GPU_CHOICES)}, not {spec.gpu!r}")
    if spec.duration is not None and not spec.duration > 0:
        raise UsageError("--duration must be > 0")
    check_ssh(spec.ssh)
    return spec if url == spec.url else replace(spec, url=url)


def _baseline(args: argparse.Namespace) -> float | None:
    """``--baseline TOKS_PER_S``, or ``--baseline-run RUN``'s recorded tok/s median."""
    ref = getattr(args, "baseline_run", None)
    if not ref:
        return getattr(args, "baseline", None)
    from eagle_tui.history.store import HistoryError, baseline_of

    try:
        return baseline_of(ref)
    except HistoryError as exc:
        raise UsageError(f"--baseline-run {ref}: {exc}") from None


def spec_from_args(args: argparse.Namespace, command: str) -> DashboardSpec:
    """The one translation from a command line to a spec; raises :class:`UsageError`.

    ``args`` holds whichever of the source, SSH, dashboard, replay and headless options the
    command registered (``commands/common.py``); an option a command lacks keeps its default.
    """
    file = getattr(args, "file", None)
    replay = ReplaySpec(Path(file), getattr(args, "kind", "auto"), getattr(args, "speed", None)
                        ) if file is not None else None
    spec = DashboardSpec(
        log=getattr(args, "log", None),
        url=getattr(args, "url", None),
        pid=getattr(args, "pid", None),
        container=getattr(args, "container", None),
        container_cli=getattr(args, "container_cli", "auto"),
        ssh=ssh_spec_from_args(args),
        draft_config=getattr(args, "draft_config", None),
        baseline=_baseline(args),
        record=getattr(args, "record", None),
        gpu=getattr(args, "gpu", "auto"),
        replay=replay,
        config_path=getattr(args, "config", None),
        theme=getattr(args, "theme", None),
        max_lines=getattr(args, "max_lines", None),
        headless=bool(getattr(args, "headless", False)),
        json=bool(getattr(args, "json", False)),
        duration=getattr(args, "duration", None),
        health_interval=HEALTH_INTERVAL_S,
        command=command,
        prometheus=getattr(args, "prometheus", None),
        prom_instance=getattr(args, "instance", None),
    )
    return check_sources(spec)


__all__ = [
    "GPU_CHOICES",
    "HEALTH_INTERVAL_S",
    "REPLAY_KINDS",
    "DashboardSpec",
    "ReplaySpec",
    "SshSpec",
    "check_sources",
    "check_ssh",
    "is_local_host",
    "normalize_url",
    "spec_from_args",
    "ssh_spec_from_args",
    "url_port",
]
