"""``eagle-tui launch [--ssh DEST] [--log PATH] [--name NAME] [--env K[=V]]... [--force] [--fix]
[--no-tui] [--read-only] [--keep] -- CMD...``: lint, start detached, record, then watch.

``CMD`` may be a container's run (``docker run``/``podman run``/``docker container run ...
IMAGE [COMMAND]``): it is linted as ``lint`` reads it, started detached with the run's label and a
name, and watched as ``watch --container`` watches it.

Exit codes (``--no-tui``, like ``wait``): 0 ready, 1 the server crashed, 2 usage or refused
(lint errors without ``--force``, an unknown host key), 3 timeout, 4 ready with alerts at the
``--fail-on`` level. The server keeps running after eagle-tui exits; ``eagle-tui stop RUN``
stops it.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from eagle_tui.assembly.remote import connect_one, one_transport
from eagle_tui.assembly.spec import DashboardSpec, ssh_spec_from_args
from eagle_tui.commands import argtypes
from eagle_tui.commands.common import add_ssh_args
from eagle_tui.console import fail, warn
from eagle_tui.model.boundary.termtext import inert_lines

if TYPE_CHECKING:
    from eagle_tui.history.records import RunRecord
    from eagle_tui.history.store import RunStore
    from eagle_tui.launch.plan import Prepared
    from eagle_tui.launch.process import RunHandle

EXIT_USAGE = 2


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "launch", help="lint, start a server detached, record it and watch it",
        description="Lint the command (errors refuse the launch unless --force), start the "
        "server detached in its own process group (locally or over --ssh), record it in the "
        "run history and open the dashboard on it (--no-tui: print like `wait`). A "
        "`docker run ...` / `podman run ...` (or `docker container run`) is "
        "started detached (-d added) with the label eagle-tui.run=TOKEN and a name "
        "eagle-tui-run-ID-XXXXXX when it has none; --env names pass as `-e NAME` (values never in "
        "an argv); the dashboard follows the container as `watch --container` does; K stops "
        "and removes it, R/E/F start the new command as a new container. Exit codes "
        "with --no-tui: 0 ready, 1 crashed, 2 usage/refused, 3 timeout, 4 ready with alerts "
        "at the --fail-on level.")
    p.add_argument("--log", metavar="PATH", type=argtypes.path_text, default=None,
                   help="server log file (default: a new file per launch in the data dir)")
    p.add_argument("--name", metavar="NAME", default=None, help="a name for the run")
    p.add_argument("--env", metavar="K[=V]", action="append", default=[],
                   help="environment for the server (K alone: the value from this "
                   "environment); values are never stored")
    p.add_argument("--cwd", metavar="DIR", type=argtypes.path_text, default=None,
                   help="folder to start the server in (default: here; the login folder "
                   "over SSH)")
    p.add_argument("--force", action="store_true", help="launch despite lint errors")
    p.add_argument("--fix", action="store_true",
                   help="apply the lint's known fixes to the command before starting it (what "
                   "changed is printed)")
    p.add_argument("--no-tui", action="store_true",
                   help="no dashboard: print progress like `wait` and exit with its codes")
    p.add_argument("--read-only", action="store_true",
                   help="dashboard without the kill/restart/edit keys")
    p.add_argument("--keep", action="store_true",
                   help="a container's run: keep a container the dashboard stops (K, and the "
                   "old one a relaunch R/E/F replaces) instead of removing it")
    p.add_argument("--timeout", metavar="SECONDS", type=argtypes.seconds, default=900.0,
                   help="with --no-tui: give up after this long (default 900)")
    p.add_argument("--json", action="store_true", help="with --no-tui: JSON lines")
    p.add_argument("--fail-on", choices=("critical", "warning"), default=None,
                   help="with --no-tui: exit 4 at ready when alerts of this level are present")
    p.add_argument("--baseline", metavar="TOKS_PER_S", type=argtypes.rate, default=None,
                   help="non-speculative tok/s to compare against")
    p.add_argument("--baseline-run", metavar="RUN", default=None,
                   help="take the baseline tok/s from a recorded run")
    add_ssh_args(p)
    p.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- CMD...",
                   help="the server command (after --)")
    p.set_defaults(func=run)


def watch_spec(args: argparse.Namespace, log: str, url: str, pid: int,
               label: str = "", log_offset: int = 0) -> DashboardSpec:
    """What the dashboard (or ``wait``) follows for the launched run: its lines of ``log``,
    from ``log_offset`` (a log file that held another run's lines before)."""
    from eagle_tui.assembly.spec import HEALTH_INTERVAL_S

    return DashboardSpec(log=log, log_offset=log_offset, url=url, pid=pid,
                         ssh=ssh_spec_from_args(args),
                         baseline=args.baseline, headless=args.no_tui, json=args.json,
                         health_interval=HEALTH_INTERVAL_S, label=label, command="launch")


@dataclass(frozen=True)
class Started:
    """A started run: what the dashboard (or ``wait``) follows, and what K/R/E work from."""

    spec: DashboardSpec
    prep: Prepared
    run: RunRecord
    launched: RunHandle


async def launch_async(args: argparse.Namespace, words: list[str], err: TextIO,
                       out: TextIO) -> tuple[int, Started | None]:
    """Lint and start; returns (exit code if finished, the started run)."""
    from eagle_tui.commands.lint import print_text
    from eagle_tui.history.store import HistoryError, RunStore
    from eagle_tui.launch.plan import env_values, prepare, prepare_fixed, start
    from eagle_tui.launch.process import LaunchError
    from eagle_tui.model.boundary.shellwords import join
    from eagle_tui.model.launching.cmdline import CommandError
    from eagle_tui.model.launching.redact import redact_words
    from eagle_tui.transport.base import TransportError

    try:
        env = env_values(args.env)
        store = RunStore()
    except (ValueError, HistoryError) as exc:
        fail("launch", exc, err)
        return EXIT_USAGE, None
    try:
        transport = one_transport(ssh_spec_from_args(args))
    except ValueError as exc:
        fail("launch", exc, err)
        return EXIT_USAGE, None
    try:
        await connect_one(transport)
        prep = await prepare(transport, words, cwd=args.cwd, env=env)
        if getattr(args, "fix", False):  # (a Namespace built by a caller may lack it)
            prep, fixed = await prepare_fixed(transport, prep, cwd=args.cwd, env=env)
            for f in fixed.applied:
                if f.remedy is not None:
                    warn(inert_lines(f"eagle-tui launch: fixed {f.code}: "
                                     f"{f.remedy.describe()}"), err)
            if fixed.applied:
                warn(inert_lines(f"eagle-tui launch: command: {join(redact_words(prep.argv))}"),
                     err)
        if not prep.result.ok or prep.result.count("warning"):
            print_text(prep.cmd, prep.result, err, transport.host)
        if not prep.result.ok and not args.force:
            warn(inert_lines("eagle-tui launch: refused: lint found errors (fix them, or --force)"),
                 err)
            return EXIT_USAGE, None
        if prep.container is not None and args.log:
            raise CommandError("--log: a container's log is the engine's (`logs`)")
        run, launched = await start(store, transport, prep, name=args.name, log_path=args.log,
                                    baseline=args.baseline)
        spec = watch_spec(args, launched.log_path, prep.url, launched.pid,
                          f"{run.name or run.id}: {launched.where}",
                          launched.log_offset)
        if prep.container is not None:  # followed as ``watch --container`` follows one
            from dataclasses import replace

            from eagle_tui.assembly.containers import resolve_container

            spec = await resolve_container(replace(spec, **launched.follow()), transport)
    except (CommandError, LaunchError, HistoryError, TransportError, TimeoutError) as exc:
        fail("launch", exc or "timed out", err)
        return EXIT_USAGE, None
    finally:
        await transport.close()
    where = f" on {transport.host}" if transport.host else ""
    warn(inert_lines(f"eagle-tui launch: started run {run.label}{where}: "
                     f"{launched.started_text}, {prep.url} (stop: eagle-tui stop {run.id})"),
         err, flush=True)
    from dataclasses import replace

    from eagle_tui.history.usual import usual_times

    try:
        usual = usual_times(store, host=run.host, engine=run.engine, flags=run.flags or {},
                            exclude=run.id)
    except HistoryError:
        usual = None
    return -1, Started(replace(spec, usual=usual, launched_spec=prep.spec_config), prep, run,
                       launched)


def _record_outcome(run_id: int, code: int) -> None:
    from eagle_tui.history.store import HistoryError, RunStore

    state = {0: "ready", 1: "crashed", 3: "timeout", 4: "ready"}.get(code)
    if state is None:
        return
    try:
        if code == 1:
            RunStore().update(run_id, state=state, ended=time.time())
        else:
            RunStore().update(run_id, state=state)
    except HistoryError as exc:
        warn(inert_lines(f"eagle-tui launch: warning: {exc}"))


def run(args: argparse.Namespace) -> int:
    from eagle_tui.errors import EagleError
    from eagle_tui.model.launching.cmdline import CommandError, split_command

    words = list(args.cmd)
    if words and words[0] == "--":
        words = words[1:]
    try:
        if not words:
            raise ValueError("no command given (eagle-tui launch -- CMD...)")
        words = split_command(words)
        if not args.timeout > 0:
            raise ValueError("--timeout must be > 0")
        if args.log is not None and not args.ssh and Path(args.log).is_dir():
            raise ValueError(f"--log {args.log}: is a directory")
        if getattr(args, "baseline_run", None):  # the baseline from a recorded run
            from eagle_tui.commands.runfigures import refreshed
            from eagle_tui.history.store import RunStore, baseline_of

            store = RunStore()
            _rec, _note = refreshed(store, store.get(args.baseline_run))
            args.baseline = baseline_of(args.baseline_run, store)
    except (ValueError, CommandError, EagleError) as exc:
        fail("launch", exc)
        return EXIT_USAGE
    code, started = asyncio.run(launch_async(args, words, sys.stderr, sys.stdout))
    if started is None:
        return code
    from eagle_tui.history.recorder import HistoryRecorder
    from eagle_tui.history.store import RunStore

    spec, run_id = started.spec, started.run.id
    store = RunStore()
    recorder = HistoryRecorder(store, run_id)
    if args.no_tui:
        from eagle_tui.assembly.backstop import backstop
        from eagle_tui.commands.wait import wait_async

        with backstop(args.timeout, "launch"):
            code = asyncio.run(wait_async(spec, args.timeout, sys.stdout, args.fail_on,
                                          subscribers=[recorder.on_batch]))
        _record_outcome(run_id, code)
        return code
    from eagle_tui.assembly.control import LaunchControl
    from eagle_tui.assembly.open import open_dashboard

    control = None if args.read_only else LaunchControl(
        store=store, spec=spec, prep=started.prep, run=started.run, launched=started.launched,
        keep=bool(getattr(args, "keep", False)))
    code = open_dashboard(spec, subscribers=[recorder.on_batch], control=control)
    _left_as_it_is(store, (control.run if control is not None else started.run).id)
    return code


def _left_as_it_is(store: RunStore, run_id: int) -> None:
    """After the dashboard closed: the run it showed last (a relaunch's, after F, R or E) is
    left as it is, its server most likely running: say which, and how to stop or watch it."""
    from eagle_tui.history.records import FINAL_STATES
    from eagle_tui.history.store import HistoryError

    try:
        rec = store.get(str(run_id))
    except HistoryError:
        return
    if rec.state not in FINAL_STATES:
        warn(inert_lines(f"eagle-tui launch: run {rec.label} left as it is ({rec.state}): "
                         f"`eagle-tui stop {rec.id}` stops it, `eagle-tui attach {rec.id}` "
                         "watches it again"), sys.stderr)


__all__ = ["Started", "launch_async", "register", "run", "watch_spec"]
