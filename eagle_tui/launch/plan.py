"""From a command line to a recorded, started run (shared by ``launch`` and the dashboard's R/E).

:func:`prepare` parses and lints the command on the target host; :func:`start` starts it
detached and records it in the run history. A relaunch (``R``, ``E``) is a new run whose
``parent`` is the run it replaces, so history and comparison see both.
"""

from __future__ import annotations

import os
import posixpath
import time
from dataclasses import dataclass, field, replace
from typing import Any

from eagle_tui.history.records import RunRecord
from eagle_tui.history.store import RunStore, data_dir
from eagle_tui.launch.container import ContainerLaunched, start_container
from eagle_tui.launch.process import Launched, new_token, run_argv, start_detached
from eagle_tui.model.boundary.shellwords import join
from eagle_tui.model.events import SpecConfig
from eagle_tui.model.launching.cmdline import ParsedCommand, launch_profile
from eagle_tui.model.launching.container import CLIS
from eagle_tui.model.launching.container_checks import (
    ContainerCommand,
    host_port,
    lint_container,
    read_command,
    rebuild,
)
from eagle_tui.model.launching.container_launch import (
    NAME_PREFIX,
    container_id,
    framed,
    record_of,
)
from eagle_tui.model.launching.lint import Fixed, LintResult, fix, lint
from eagle_tui.model.launching.redact import redact_words
from eagle_tui.probe.container_facts import gather_container
from eagle_tui.probe.facts import gather
from eagle_tui.probe.tables import load_tables
from eagle_tui.transport.base import Transport

REMOTE_LOG_DIR = ".cache/eagle-tui/logs"  # relative to the login folder on an SSH host


@dataclass(frozen=True)
class Prepared:
    """A parsed and linted command, ready to start."""

    argv: list[str]
    cmd: ParsedCommand
    result: LintResult
    cwd: str
    env: dict[str, str] = field(default_factory=dict, repr=False)  # values: never stored
    extra: dict[str, str] = field(default_factory=dict, repr=False)  # the --env ones
    container: ContainerCommand | None = None  # the run when the command is a container's

    @property
    def port(self) -> int:
        if self.container is not None:
            published = host_port(self.container)  # (the host's port that reaches the server)
            if published is not None:
                return published
        profile = launch_profile(self.cmd.engine)
        value = self.cmd.get(profile.launch.port_dest)
        if isinstance(value, str) and value.isdigit() and len(value) < 6:
            return int(value)
        return profile.default_port

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def spec_config(self) -> SpecConfig | None:
        """The speculative settings the command asks for, read the engine's way (``None``:
        none): the dashboard knows speculation is configured before the log says so."""
        plan = launch_profile(self.cmd.engine).launch.read_plan(self.cmd)
        if not (plan.algorithm or plan.draft):
            return None
        return SpecConfig(plan.algorithm, plan.draft, plan.num_steps, plan.topk,
                          plan.draft_tokens, source="launch")


def env_values(specs: list[str], environ: dict[str, str] | None = None) -> dict[str, str]:
    """``--env K`` (value from eagle-tui's environment) and ``--env K=V`` → ``{K: V}``."""
    source = os.environ if environ is None else environ
    out: dict[str, str] = {}
    for spec in specs:
        key, eq, value = spec.partition("=")
        if not key or not key.replace("_", "a").isalnum() or key[0].isdigit():
            raise ValueError(f"--env {spec!r}: not a variable name")
        if not eq:
            if key not in source:
                raise ValueError(f"--env {key}: not set in eagle-tui's environment")
            value = source[key]
        out[key] = value
    return out


async def prepare(transport: Transport, argv: list[str], *, cwd: str | None = None,
                  env: dict[str, str] | None = None) -> Prepared:
    """Parse (raises ``CommandError``) and lint the command on the transport's host; a
    container's run is linted as ``lint`` does (the engine's words and the container's flags)."""
    where = cwd or (os.getcwd() if not transport.host else ".")
    cmd, cc = read_command(argv, load_tables())
    if cc is not None:
        cfacts, more = await gather_container(cc, transport, cwd=where)
        res = lint_container(cc, cfacts, more)
        # the CLI's environment: its ``K=V`` words and the --env values (those pass as ``-e K``)
        prefix = dict(w.split("=", 1) for w in argv[:len(argv) - len(run_argv(argv))])
        return Prepared(list(argv), cc.cmd, res, where, {**prefix, **(env or {})},
                        dict(env or {}), cc)
    facts = await gather(cmd, transport, cwd=where, environ=env if transport.host else None)
    return Prepared(list(argv), cmd, lint(cmd, facts), where, {**dict(cmd.env), **(env or {})},
                    dict(env or {}))


async def prepare_fixed(transport: Transport, prep: Prepared, *, cwd: str | None = None,
                        env: dict[str, str] | None = None) -> tuple[Prepared, Fixed]:
    """``prep`` with its lint's remedies applied, parsed and linted again on the same host
    (``prep`` itself, and nothing applied, when no finding has a remedy)."""
    fixed = fix(prep.cmd, prep.result, load_tables()[prep.cmd.engine])
    if not fixed.applied:
        return prep, fixed
    if prep.container is not None:  # the engine's words fixed, the container's part kept
        fixed = replace(fixed, words=rebuild(prep.container, fixed.words))
    return await prepare(transport, fixed.words, cwd=cwd, env=env), fixed


def default_log(transport: Transport, name: str) -> str:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    if transport.host:
        return posixpath.join(REMOTE_LOG_DIR, f"{name}-{stamp}.log")
    return str(data_dir() / "logs" / f"{name}-{stamp}.log")


def _flags(cmd: ParsedCommand) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for g in cmd.given:
        value = g.value
        if isinstance(value, list):
            value = redact_words([g.typed, *value])[1:]
        elif isinstance(value, str):
            value = redact_words([g.typed, value])[1]
        out[g.spec.dest] = value
    return out


async def start(store: RunStore, transport: Transport, prep: Prepared, *,
                name: str | None = None, log_path: str | None = None, demo: bool = False,
                parent: int | None = None, baseline: float | None = None,
                ) -> tuple[RunRecord, Launched | ContainerLaunched]:
    """Record the run, start it detached, and record how to find its group again.

    The token is recorded before the server starts: a start that fails half-way (the process
    started, its answer lost) leaves a run that ``stop`` can still find by it."""
    words = redact_words(prep.argv)
    token = new_token()
    if prep.container is not None:  # (a run it cannot start is refused before it is recorded)
        framed(prep.container.run, token=token, name=NAME_PREFIX)
    run = store.add(kind="launched", demo=demo, engine=prep.cmd.engine, host=transport.host,
                    token=token,
                    command=join(words), argv=words,
                    flags=_flags(prep.cmd), env_names=sorted(prep.env), cwd=prep.cwd,
                    url=prep.url, parent=parent, baseline=baseline, state="starting",
                    **({"name": name} if name else {}))
    if prep.container is not None:
        return await _start_container(store, transport, prep, run, token)
    log = log_path or default_log(transport, run.name or f"run-{run.id}")
    if not transport.host and not os.path.isabs(log):
        log = os.path.join(prep.cwd, log)
    try:
        launched = await start_detached(transport, run_argv(prep.argv), cwd=prep.cwd, log_path=log,
                                        env=prep.env, token=token)
    except BaseException:
        store.update(run.id, state="failed", ended=time.time(), log_path=log)
        raise
    store.update(run.id, log_path=log, log_offset=launched.log_offset, pid=launched.pid,
                 pgid=launched.pgid, proc_start=launched.proc_start, token=launched.token)
    return store.get(str(run.id)), launched


async def _start_container(store: RunStore, transport: Transport, prep: Prepared,
                           run: RunRecord, token: str) -> tuple[RunRecord, ContainerLaunched]:
    """The container's run started (its label carries the token) and recorded with its id,
    name, image and options."""
    assert prep.container is not None
    crun = prep.container.run
    try:
        launched, _argv = await start_container(
            transport, crun, cwd=prep.cwd, token=token,
            name=f"{NAME_PREFIX}{run.id}-{token[:6]}",  # (two histories share one engine)
            env=prep.env, pass_env=sorted(prep.extra))
    except BaseException:
        store.update(run.id, state="failed", ended=time.time())
        raise
    store.update(run.id, container=record_of(crun, cli_id=launched.id, name=launched.name))
    return store.get(str(run.id)), launched


def handle_of(rec: RunRecord) -> Launched | ContainerLaunched:
    """How a recorded run is stopped: its container (its CLI and id read back through the
    grammar: the history is a file anyone with the account may edit), else its group."""
    if rec.container is not None:
        cli, cid = rec.container_text("cli"), container_id(rec.container_text("id"))
        if cli not in CLIS or cid is None:
            raise ValueError(f"run {rec.label}: its recorded container is not one "
                             f"({cli[:20]!r}, {rec.container_text('id')[:70]!r})")
        return ContainerLaunched(cli, cid, rec.container_text("name") or cid[:12],
                                 rec.container_text("image"), rec.token or "")
    return Launched(rec.pid or 0, rec.pgid or 0, rec.proc_start or "", rec.token or "",
                    rec.log_path or "", rec.log_offset or 0)


__all__ = ["Prepared", "default_log", "env_values", "handle_of", "prepare", "run_argv", "start"]
