"""Open the fleet view: the Prometheus poller, headless printing or the fleet screen, drill-down.

:class:`FleetSpec` (frozen, from the command line) says which Prometheus, which series, how
often; :func:`open_fleet` runs the headless loop (text lines or one JSON object per refresh,
ending after ``--count`` refreshes or ``--duration`` seconds) or the Textual fleet app.

Drill-down: the fleet app exits with the row the user chose; the ordinary dashboard is opened
for that instance through :func:`~eagle_tui.assembly.open.open_dashboard` (metrics from
Prometheus' stored series of it, :mod:`eagle_tui.sources.prom_metrics`; readiness and
``/server_info`` at the ``instance`` label's address when it answers; over SSH when its host
maps to a destination, so its GPUs come too), and when that dashboard is closed the fleet
comes back.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sys
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from eagle_tui.assembly.spec import DashboardSpec, SshSpec
from eagle_tui.console import say
from eagle_tui.errors import UsageError
from eagle_tui.files import NotRegularFileError, read_text
from eagle_tui.model.boundary.grammar import GrammarError
from eagle_tui.model.boundary.termtext import inert_lines
from eagle_tui.model.fleet.flags import FleetFilter, sort_rows
from eagle_tui.model.fleet.hosts import (
    SshRule,
    parse_ssh_map,
    ssh_config_hosts,
    ssh_destination,
)
from eagle_tui.model.fleet.snapshot import FleetRow, FleetSnapshot
from eagle_tui.sources.prometheus import FleetPoller

if TYPE_CHECKING:
    from eagle_tui.probe.fleet_prober import FleetProber
    from eagle_tui.transport.base import Transport


@dataclass(frozen=True)
class FleetSpec:
    prometheus: str
    selector: str | None = None
    ssh_map: Path | None = None
    ssh_config: Path | None = None
    headless: bool = False
    json: bool = False
    duration: float | None = None
    count: int | None = None
    interval: float = 5.0
    window: str = "1m"
    lookback: str = "15m"
    deadline_s: float = 5.0
    sort: str = "flags"
    filter: FleetFilter = field(default_factory=FleetFilter)
    theme: str | None = None
    config_path: Path | None = None

    def poller(self, *, sparklines: bool = False) -> FleetPoller:
        return FleetPoller(self.prometheus.rstrip("/"), selector=self.selector,
                           window=self.window, lookback=self.lookback, interval=self.interval,
                           deadline_s=self.deadline_s, sparklines=sparklines)


def load_ssh_rules(spec: FleetSpec) -> tuple[list[SshRule], set[str]]:
    """The ``--ssh-map`` rules (a bad file is a usage error) and ``~/.ssh/config``'s hosts."""
    rules: list[SshRule] = []
    if spec.ssh_map is not None:
        try:
            rules = parse_ssh_map(read_text(spec.ssh_map))
        except NotRegularFileError as exc:
            raise UsageError(f"--ssh-map {exc}") from None
        except (OSError, ValueError) as exc:
            raise UsageError(f"--ssh-map {spec.ssh_map}: {exc}") from None
    config = spec.ssh_config or Path.home() / ".ssh" / "config"
    hosts: set[str] = set()
    with contextlib.suppress(OSError, ValueError):
        hosts = ssh_config_hosts(read_text(config))
    return rules, hosts


def tcp_reachable(instance: str, timeout_s: float = 1.0) -> bool:
    """Whether the ``instance`` label's address accepts a TCP connection from here (bounded)."""
    host, _, port = instance.rpartition(":")
    if not host or not port.isdigit():
        return False
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s):
            return True
    except OSError:
        return False


def drill_spec(spec: FleetSpec, row: FleetRow, rules: list[SshRule],
               config_hosts: set[str],
               reachable: Callable[[str], bool] | None = None) -> DashboardSpec:
    """The ordinary dashboard for one instance: metrics from Prometheus, its own readiness and
    ``/server_info`` when its address answers (through SSH when its host maps to a
    destination: its GPUs and processes come too); else readiness from Prometheus' ``up``.

    ``reachable`` (:func:`tcp_reachable` when the fleet opens it; ``None``: assumed) says
    whether the address answers from here. A destination the grammar gate refuses is a
    :class:`UsageError` naming the label."""
    try:
        dest = ssh_destination(row.instance, rules, config_hosts)
    except GrammarError as exc:
        raise UsageError(f"instance {row.instance[:80]!r}: {exc}") from None
    ssh = (SshSpec(dests=(dest,), config_path=spec.ssh_config, outside=True) if dest
           else SshSpec())
    direct = dest is not None or reachable is None or reachable(row.instance)
    url = f"http://{row.instance}" if direct else None
    return DashboardSpec(url=url, ssh=ssh, theme=spec.theme, config_path=spec.config_path,
                         label=f"{row.instance} (fleet)", command="watch",
                         prometheus=spec.prometheus.rstrip("/"), prom_instance=row.instance)


def with_prober(spec: FleetSpec, poller: FleetPoller, rules: list[SshRule],
                config_hosts: set[str]) -> FleetProber | None:
    """Give ``poller`` the SSH prober's hints (``down or starting`` told apart on the hosts
    that map to SSH); ``None`` when no host can map. Its connections are made like the
    drill-down's (``SshSpec``: ``~/.ssh/config`` or ``--ssh-config``, the agent)."""
    if not rules and not config_hosts:
        return None
    from eagle_tui.assembly.remote import make_transports
    from eagle_tui.probe.fleet_prober import FleetProber

    def connect(dest: str) -> Transport:
        return make_transports(SshSpec(dests=(dest,), config_path=spec.ssh_config,
                                       outside=True,
                                       connect_timeout=min(10.0, spec.deadline_s)))[0]

    prober = FleetProber(rules, config_hosts, connect, ttl_s=max(10.0, 2 * spec.interval),
                         deadline_s=max(spec.deadline_s, 10.0))
    poller.hints, poller.observe = prober.hints, prober.observe
    return prober


async def probed(poller: FleetPoller, prober: FleetProber | None,
                 count: int | None = None) -> AsyncIterator[FleetSnapshot]:
    """``poller``'s snapshots; the prober's probes and connections end with them."""
    try:
        async for snap in poller.snapshots(count):
            yield snap
    finally:
        if prober is not None:
            await prober.close()


def shown(spec: FleetSpec, snap: FleetSnapshot) -> FleetSnapshot:
    """The snapshot with the spec's filter and sort applied to its rows."""
    from dataclasses import replace

    return replace(snap, rows=tuple(sort_rows(spec.filter.apply(snap.rows), spec.sort)))


async def run_headless(spec: FleetSpec, out: TextIO, poller: FleetPoller | None = None,
                       prober: FleetProber | None = None) -> int:
    """Print every refresh until ``count`` refreshes or ``duration`` seconds; 0, or 1 when
    the last refresh found Prometheus unusable."""
    from eagle_tui.headless.fleet import snapshot_json, snapshot_lines

    poller = poller or spec.poller()
    deadline = None if spec.duration is None else time.monotonic() + spec.duration
    last: FleetSnapshot | None = None

    async def loop() -> None:
        nonlocal last
        async for snap in probed(poller, prober, spec.count):
            last = snap
            view = shown(spec, snap)
            text = snapshot_json(view) if spec.json else "\n".join(snapshot_lines(view))
            say(inert_lines(text), out, flush=True)
            if deadline is not None and time.monotonic() >= deadline:
                return

    if deadline is None:
        await loop()
    else:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(loop(), max(0.0, deadline - time.monotonic()) + spec.deadline_s)
    return 1 if last is not None and last.status == "stale" else 0


def open_fleet(spec: FleetSpec,
               open_dashboard: Callable[[DashboardSpec], int] | None = None) -> int:
    """Headless (``--headless``/``--json``/no TTY) or the fleet app with its drill-down loop."""
    rules, hosts = load_ssh_rules(spec)
    if spec.headless or spec.json or not (sys.stdin.isatty() and sys.stdout.isatty()):
        poller = spec.poller()
        prober = with_prober(spec, poller, rules, hosts)
        from eagle_tui.assembly.backstop import backstop

        with backstop(spec.duration, "fleet"):
            return asyncio.run(run_headless(spec, sys.stdout, poller, prober))
    from eagle_tui.ui.fleet_app import FleetApp

    if open_dashboard is None:
        from eagle_tui.assembly.open import open_dashboard as opener
        open_dashboard = opener
    while True:
        poller = spec.poller(sparklines=True)
        prober = with_prober(spec, poller, rules, hosts)
        app = FleetApp(partial(probed, poller, prober), sort=spec.sort, filter=spec.filter,
                       prometheus=spec.prometheus)
        chosen = app.run()
        if chosen is None:
            return 0
        open_dashboard(drill_spec(spec, chosen, rules, hosts, reachable=tcp_reachable))


__all__ = ["FleetSpec", "drill_spec", "load_ssh_rules", "open_fleet", "probed", "run_headless",
           "shown", "tcp_reachable", "with_prober"]
