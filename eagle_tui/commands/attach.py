"""``eagle-tui attach [RUN | --ssh DEST] [--pick N] [--list] [--log PATH]``: watch a server
without being told where its log, port and process are.

With a RUN (an id, a name, ``last``, ``last~N``) the recorded run is reopened. Without one the
host's SGLang/vLLM servers are discovered (locally or over ``--ssh``, nothing installed there):
one server opens at once, several need ``--pick N`` (or a choice at the prompt on a terminal).
A server's log is found from where its stdout/stderr point; when that is a pipe, a terminal or
a socket (a container's log) eagle-tui says so and watches the server without its log unless
``--log`` is given. A server eagle-tui did not launch is always watched read-only.
Exit codes: those of ``watch`` (0), 2 usage (nothing found, an unknown run, a refused host).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from typing import Any

from eagle_tui.assembly.remote import connect_one, one_transport
from eagle_tui.assembly.spec import DashboardSpec, SshSpec, ssh_spec_from_args
from eagle_tui.commands import argtypes
from eagle_tui.commands.common import add_ssh_args
from eagle_tui.console import fail, say, warn
from eagle_tui.model.boundary.termtext import Inert, inert_lines
from eagle_tui.model.ingest.normalize import sanitize

EXIT_USAGE = 2


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "attach", help="watch a running server found on the host (or a recorded run)",
        description=__doc__.split("\n\n")[1] if __doc__ else None)
    p.add_argument("run", metavar="RUN", nargs="?", default=None,
                   help="a recorded run (id, name, last, last~N); default: discover")
    p.add_argument("--pick", metavar="N", type=argtypes.count, default=None,
                   help="which of several discovered servers (1 = the first listed)")
    p.add_argument("--list", action="store_true",
                   help="only list the discovered servers (with --json: a JSON array)")
    p.add_argument("--log", metavar="PATH", type=argtypes.path_text, default=None,
                   help="the server's log, where its stdout is not a file")
    p.add_argument("--headless", action="store_true", help="print lines, no dashboard")
    p.add_argument("--json", action="store_true", help="JSON lines (headless)")
    p.add_argument("--duration", metavar="SECONDS", type=argtypes.seconds, default=None,
                   help="headless: stop after this long")
    add_ssh_args(p)
    p.set_defaults(func=run)


def found_dict(f: Any, index: int) -> dict[str, Any]:
    from eagle_tui.model.launching.redact import redact_words

    return {"index": index, "engine": f.engine, "pid": f.launcher.pid, "port": f.port,
            "url": f.url, "algorithm": f.algorithm, "draft": f.draft, "tp": f.tp,
            "processes": [m.pid for m in f.members], "log": f.log_path,
            "log_kind": f.log_kind, "command": " ".join(redact_words(list(f.launcher.argv)))}


def container_dict(f: Any, index: int) -> dict[str, Any]:
    """A server in a container as ``attach --list --json`` shows it."""
    from eagle_tui.model.containers.states import status_text
    from eagle_tui.model.launching.redact import redact_words

    return {"index": index, "kind": "container", "engine": f.server.engine,
            "container": f.name, "id": f.facts.id, "cli": f.cli, "image": f.facts.image,
            "compose": f.facts.compose or None, "launched": f.launched,
            "state": f.facts.status, "status": status_text(f.facts), "pid": f.facts.pid or None,
            "port": f.server.port, "url": f.server.url or None, "url_via": f.server.via,
            "log": f.log, "log_kind": "container",
            "command": " ".join(redact_words(list(f.facts.command)))}


async def _discover(ssh: SshSpec) -> list[Any]:
    """The host's servers: its processes', then its containers' (a container's server is
    listed once, as the container, not also as the host process it is)."""
    from eagle_tui.probe.discover import discover
    from eagle_tui.probe.tables import load_tables
    from eagle_tui.sources.containers.discover import discover_containers

    transport = one_transport(ssh)
    try:
        await connect_one(transport)
        found: list[Any] = await discover(transport)
        boxed = await discover_containers(transport, load_tables())
    finally:
        await transport.close()
    inside = {f.facts.pid for f in boxed if f.facts.pid}
    return [f for f in found if not inside & {m.pid for m in f.members}] + list(boxed)


def _is_container(f: Any) -> bool:
    return hasattr(f, "facts")


def _row(f: Any, index: int) -> dict[str, Any]:
    return container_dict(f, index) if _is_container(f) else found_dict(f, index)


def _choose(found: list[Any], pick: int | None) -> Any | None:
    if pick is not None:
        if not 1 <= pick <= len(found):
            raise ValueError(f"--pick {pick}: there are {len(found)} servers")
        return found[pick - 1]
    if len(found) == 1:
        return found[0]
    if not sys.stdin.isatty():
        raise ValueError(f"{len(found)} servers found: choose one with --pick N")
    try:
        answer = input(f"which server (1-{len(found)})? ").strip()
    except EOFError:
        return None
    if not answer.isdigit() or not 1 <= int(answer) <= len(found):
        raise ValueError(f"not a server number: {answer!r}")
    return found[int(answer) - 1]


def _record(f: Any, host: str, log: str | None) -> int | None:
    """The history row of a discovered server: the launched run it is, or a new attached one."""
    from eagle_tui.history.store import HistoryError, RunStore
    from eagle_tui.model.launching.redact import redact_words

    words = redact_words(list(f.launcher.argv))
    try:
        store = RunStore()
        for rec in store.list(demo=None, limit=200):  # a run eagle-tui launched: the same run
            if rec.kind == "launched" and rec.pid == f.launcher.pid and rec.host == host and \
                    rec.pgid == f.launcher.pgid and rec.ended is None:
                return rec.id
        return store.add(kind="attached", engine=f.engine, host=host, command=" ".join(words),
                         argv=words, flags={g.spec.dest: g.value for g in f.cmd.given},
                         cwd=f.launcher.cwd, url=f.url, pid=f.launcher.pid, log_path=log,
                         state="attached", started=time.time()).id
    except HistoryError as exc:  # the history is a convenience: watching goes on without it
        warn(inert_lines(f"eagle-tui: warning: {exc}"))
        return None


def watched_run(spec: DashboardSpec, *, kind: str = "watched",
                run_id: int | None = None) -> Any:
    """A history recorder for what ``spec`` watches (:class:`~eagle_tui.history.recorder.
    OpenedLater`: a new ``kind`` row unless ``run_id``, opened at the first batch)."""
    from eagle_tui.history.recorder import OpenedLater

    return OpenedLater(host=spec.ssh.dests[0] if spec.ssh.dests else "", log_path=spec.log,
                       url=spec.url, pid=spec.pid, kind=kind, run_id=run_id)


def watch_spec(args: argparse.Namespace, ssh: SshSpec, log: str | None, url: str | None,
               pid: int | None, label: str = "", command: str = "attach",
               container: tuple[str, str] | None = None) -> DashboardSpec:
    """``container``: (name, CLI) of the container the server runs in."""
    from eagle_tui.assembly.spec import HEALTH_INTERVAL_S, check_sources

    name, cli = container if container is not None else (None, "auto")
    return check_sources(DashboardSpec(
        log=log, url=url, pid=pid, ssh=ssh, container=name, container_cli=cli,
        headless=bool(getattr(args, "headless", False)),
        json=bool(getattr(args, "json", False)), duration=getattr(args, "duration", None),
        health_interval=HEALTH_INTERVAL_S, label=label, command=command,
        theme=getattr(args, "theme", None), config_path=getattr(args, "config", None),
        max_lines=getattr(args, "max_lines", None)))


def attach_discovered(args: argparse.Namespace, command: str = "attach") -> int:
    """Discover the host's servers, pick one, and watch it (``attach``; ``watch`` with no
    source options)."""
    from eagle_tui.history.store import HistoryError
    from eagle_tui.model.launching.cmdline import engine_labels
    from eagle_tui.transport.base import TransportError

    try:
        ssh = ssh_spec_from_args(args)
        one_transport(ssh)  # checks the SSH options
        found = asyncio.run(_discover(ssh))
        where = ssh.dests[0] if ssh.dests else "this machine"
        if getattr(args, "list", False):
            if args.json:
                json.dump([_row(f, i) for i, f in enumerate(found, 1)], sys.stdout)
                say(Inert(""))
            else:
                for i, f in enumerate(found, 1):
                    say(sanitize(f"{i}. {f.describe()}"))
                if not found:
                    say(inert_lines(f"no {engine_labels()} server running on "
                                    f"{sanitize(where)}"))
            return 0
        if not found:
            raise ValueError(f"no {engine_labels()} server running on {where} (give --log, "
                             "--url or --pid to watch one eagle-tui cannot see)")
        pick = getattr(args, "pick", None)
        if len(found) > 1 and pick is None:
            for i, f in enumerate(found, 1):
                warn(sanitize(f"{i}. {f.describe()}"))
        chosen = _choose(found, pick)
        if chosen is None:
            return EXIT_USAGE
        if _is_container(chosen):
            warn(sanitize(f"eagle-tui {command}: {chosen.describe()}"))
            spec = watch_spec(args, ssh, getattr(args, "log", None), chosen.server.url or None,
                              None, f"container {chosen.name}", command,
                              container=(chosen.name, chosen.cli))
            from eagle_tui.assembly.open import open_dashboard

            return open_dashboard(spec)
        log = getattr(args, "log", None) or (
            chosen.log_path if chosen.log_kind == "file" else None)
        if log is None:
            warn(sanitize(f"eagle-tui {command}: the server's output goes to a "
                          f"{chosen.log_kind} (not a file): watching it without its log; "
                          "give --log PATH to follow it"))
        warn(sanitize(f"eagle-tui {command}: {chosen.describe()}"))
        run_id = _record(chosen, where if ssh.dests else "", log)
        spec = watch_spec(args, ssh, log, chosen.url, chosen.launcher.pid,
                          f"{chosen.engine} pid {chosen.launcher.pid}", command)
    except (ValueError, HistoryError, TransportError, TimeoutError) as exc:
        fail(command, sanitize(str(exc)) or "timed out")
        return EXIT_USAGE
    from eagle_tui.assembly.open import open_dashboard

    recorder = watched_run(spec, run_id=run_id) if run_id is not None else None
    return open_dashboard(spec, subscribers=[recorder.on_batch] if recorder else [])


def run(args: argparse.Namespace) -> int:
    from eagle_tui.history.store import HistoryError, RunStore
    from eagle_tui.transport.base import TransportError

    if args.run is None:
        return attach_discovered(args)
    try:
        ssh = ssh_spec_from_args(args)
        one_transport(ssh)  # checks the SSH options
        rec = RunStore().get(args.run)
        if rec.host and not ssh.dests:
            ssh = SshSpec(dests=(rec.host,), identity_files=ssh.identity_files,
                          known_hosts_files=ssh.known_hosts_files,
                          accept_new_host_key=ssh.accept_new_host_key,
                          config_path=ssh.config_path, outside=True)  # (a file's host)
        spec = watch_spec(args, ssh, args.log or rec.log_path, rec.url, rec.pid, rec.label)
        from dataclasses import replace

        if args.log is None and rec.log_offset:  # the run's own lines of a file it appended to
            spec = replace(spec, log_offset=rec.log_offset)
        if rec.container is not None:  # a launched container: watched as --container
            from eagle_tui.assembly.containers import resolved
            from eagle_tui.launch.plan import handle_of

            spec = resolved(replace(spec, **handle_of(rec).follow()))
    except (ValueError, HistoryError, TransportError, TimeoutError) as exc:
        fail("attach", sanitize(str(exc)) or "timed out")
        return EXIT_USAGE
    from eagle_tui.assembly.open import open_dashboard

    recorder = watched_run(spec, run_id=rec.id)
    return open_dashboard(spec, subscribers=[recorder.on_batch] if recorder else [])


__all__ = ["attach_discovered", "container_dict", "found_dict", "register", "run", "watch_spec",
           "watched_run"]
