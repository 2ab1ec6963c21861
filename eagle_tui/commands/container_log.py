"""``report --container`` and ``replay --container``: a container's log so far, read once.

The log is fetched through the container's CLI (``logs --timestamps``, both streams in stamp
order; on the ``--ssh`` host when one is given) into a temporary file, which the command then
reads as it reads any log; the file is removed when the command is done.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eagle_tui.errors import UsageError

if TYPE_CHECKING:
    from eagle_tui.assembly.spec import SshSpec
    from eagle_tui.model.containers.inspect import ContainerFacts


async def _fetch(ssh: SshSpec, name: str, choice: str, path: Path,
                 seen: list[ContainerFacts] | None) -> int:
    from eagle_tui.assembly.remote import close_transports, open_transports
    from eagle_tui.model.containers.inspect import facts_of
    from eagle_tui.sources.containers.cli import ContainerError, locate
    from eagle_tui.sources.containers.logs import dump_log

    transports = await open_transports(ssh)
    try:
        cli, obj = await locate(transports[0], name, choice)
        with open(path, "wb") as out:
            count = await dump_log(cli, name, out)
        if seen is not None:
            with suppress(ContainerError):  # its state after the log: the newest end
                obj = await cli.inspect(name)
            facts = facts_of(obj)
            seen.extend(() if facts is None else (facts,))
        return count
    finally:
        await close_transports(transports)


@contextmanager
def fetched_log(args: argparse.Namespace,
                seen: list[ContainerFacts] | None = None) -> Iterator[Path]:
    """The container's log so far in a temporary file (removed afterwards), and its facts
    added to ``seen`` when given; raises the container engine's or the SSH options' one-line
    error (an ``EagleError``)."""
    # (here, not at the top: a report of a file loads no event loop or temporary files)
    import asyncio
    import tempfile

    from eagle_tui.assembly.spec import check_ssh, ssh_spec_from_args

    ssh = ssh_spec_from_args(args)
    check_ssh(ssh)
    with tempfile.TemporaryDirectory(prefix="eagle-tui-container-") as tmp:
        path = Path(tmp) / f"{args.container}.log"
        asyncio.run(_fetch(ssh, args.container, args.container_cli, path, seen))
        yield path


def with_container_end(report: dict[str, Any], facts: ContainerFacts, t: float) -> None:
    """``report``'s crash with what the container's state says of its end (as the dashboard
    tells it): a crash loop first, with the log's own cause after it; a kill where the log
    gave no crash."""
    from eagle_tui.model.containers.states import LOOP_KIND, end_crash
    from eagle_tui.model.ingest.crashhints import hint_for

    told = end_crash(facts, t)
    crash = report.get("crash")
    if told is None or (crash is not None and told[0] != LOOP_KIND):
        return
    kind, message = told
    if crash is not None and crash.get("kind") not in (LOOP_KIND, "killed"):
        message = f"{message} — {crash['kind']}: {crash['message']}"
    report["crash"] = {"kind": kind,
                       "line": crash["line"] if crash is not None else report.get("lines", 0),
                       "message": message,
                       "hint": hint_for(kind, str(report.get("engine", "unknown")))}


def one_log(given: object, args: argparse.Namespace, what: str) -> None:
    """A usage error unless exactly one of ``given`` (the command's FILE) and ``--container``."""
    container = getattr(args, "container", None)
    if bool(given) == bool(container):
        raise UsageError(f"give {what} or --container NAME (one of them)")
    if not container and getattr(args, "ssh", None):
        raise UsageError("--ssh reads a container's log: it needs --container NAME")


__all__ = ["fetched_log", "one_log", "with_container_end"]
