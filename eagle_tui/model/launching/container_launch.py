"""A ``docker``/``podman run`` as ``launch`` starts it: framed, recorded, and fixed.

``launch`` starts the user's run detached with a label naming the run (``eagle-tui.run=TOKEN``:
a filter on it lists the run's container), a name when none was given, and ``-e K`` for
each ``--env`` name (the value reaches the CLI's environment, never its argv). The framing words
go right after ``run``, so the options, the image and the command stay as typed. The record
keeps the options that matter to a run (GPUs, shared memory, ports, mounts, limits, restart
policy) with secrets masked, to compare runs by them. A fix edits the engine's words only.

Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from eagle_tui.model.launching.cmdline import CommandError, parse_command
from eagle_tui.model.launching.container import ContainerRun, is_container_command, parse_run
from eagle_tui.model.launching.container_checks import engine_command, rebuild
from eagle_tui.model.launching.flags import FlagTable
from eagle_tui.model.launching.redact import MASK, is_secret_name, redact_words
from eagle_tui.model.launching.remedy import Remedy, apply

TOKEN_LABEL = "eagle-tui.run"
LAUNCHED_CLIS = ("docker", "podman")
NAME_PREFIX = "eagle-tui-run-"
_ID = re.compile(r"^[0-9a-f]{12,64}$")
_FALSE = frozenset({"0", "f", "F", "false", "FALSE", "False"})
# options a run has many of (the rest: the last one given wins, as in pflag)
_MANY = frozenset({"publish", "volume", "mount", "env", "device", "gpus", "label", "add-host",
                   "cap-add", "cap-drop", "tmpfs", "ulimit", "sysctl", "security-opt",
                   "env-file", "expose", "dns", "group-add", "secret", "annotation"})
# the framing's own options and those that say nothing of the run
_NOT_RECORDED = frozenset({"detach", "name", "interactive", "tty", "quiet", "sig-proxy",
                           "detach-keys", "cidfile"})


def run_index(run: ContainerRun) -> int:
    """Where ``run`` is in the run's words (the framing goes right after it)."""
    first = min((o.index for o in run.options), default=len(run.head) - 1)
    for i in range(first - 1, -1, -1):
        if run.head[i] == "run":
            return i
    raise CommandError(f"{run.source}: no `run` word before the options")


def given_name(run: ContainerRun) -> str | None:
    """The ``--name`` the user gave (the last one), or ``None``."""
    names = [o.value for o in run.options if o.name == "name"]
    return names[-1] if names else None


def framed(run: ContainerRun, *, token: str, name: str,
           env_names: Iterable[str] = ()) -> list[str]:
    """The whole command as ``launch`` runs it: ``-d``, the run's label, ``--name`` (when the
    user gave none) and ``-e K`` for each name, inserted after ``run`` (raises
    :class:`CommandError` for ``--detach=false``: a launched container runs detached)."""
    if run.cli not in LAUNCHED_CLIS:  # (what the container's watch reads: its logs, inspect)
        raise CommandError(f"launch starts a docker or podman run, not a {run.source} "
                           "(lint reads it)")
    detach = [o for o in run.options if o.name == "detach"]
    if detach and detach[-1].value in _FALSE:
        raise CommandError(f"{detach[-1].typed}={detach[-1].value}: launch starts the "
                           "container detached")
    extra = [] if detach else ["-d"]
    extra += ["--label", f"{TOKEN_LABEL}={token}"]
    if given_name(run) is None:
        extra += ["--name", name]
    for key in env_names:
        extra += ["-e", key]
    at = run_index(run) + 1
    return [*run.head[:at], *extra, *run.head[at:], *run.command]


def container_id(stdout: str) -> str | None:
    """The id a detached ``run`` prints (its last line), or ``None`` when it is not one."""
    lines = [ln.strip() for ln in stdout[-4096:].splitlines() if ln.strip()]
    return lines[-1] if lines and _ID.match(lines[-1]) else None


def _value(name: str, value: str) -> str:
    if name == "env":
        return value.partition("=")[0]  # (the names only: a value may be a token)
    if name == "label" and value.startswith(TOKEN_LABEL + "="):
        return ""
    if name in ("secret",) or is_secret_name(name):
        return MASK
    return redact_words([value])[0]


def options_of(run: ContainerRun) -> dict[str, Any]:
    """The run's options as the history keeps them: ``{name: value}``, a list for those given
    more than once in kind (``-p``, ``-v``, ``-e`` names), secrets masked."""
    out: dict[str, Any] = {}
    for o in run.options:
        if o.name in _NOT_RECORDED:
            continue
        value = _value(o.name, o.value)
        if not value:
            continue
        if o.name in _MANY:
            out.setdefault(o.name, []).append(value)
        else:
            out[o.name] = value
    return out


def record_of(run: ContainerRun, *, cli_id: str, name: str) -> dict[str, Any]:
    """The history's ``container`` object of a launched run."""
    return {"cli": run.cli, "id": cli_id, "name": name, "image": run.image,
            "options": options_of(run)}


def fixed_words(words: list[str], remedies: Iterable[Remedy],
                tables: dict[str, FlagTable]) -> list[str]:
    """``words`` (a plain command or a container's run) with ``remedies`` applied to the
    engine's words, the container's part kept; a remedy for a flag the engine's table lacks
    is skipped."""
    for remedy in dict.fromkeys(remedies):
        try:
            if is_container_command(words):
                cc = engine_command(parse_run(words), tables)
                words = rebuild(cc, apply(cc.cmd, remedy, tables[cc.cmd.engine]))
            else:
                cmd = parse_command(words, tables)
                words = apply(cmd, remedy, tables[cmd.engine])
        except (CommandError, KeyError):
            continue
    return words


__all__ = ["LAUNCHED_CLIS", "NAME_PREFIX", "TOKEN_LABEL", "container_id", "fixed_words",
           "framed", "given_name", "options_of", "record_of", "run_index"]
