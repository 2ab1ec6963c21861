"""``report --container`` and ``replay --container``: a container's log so far, read once.

The log is fetched through the container's CLI (``logs --timestamps``, both streams in stamp
order; on the ``--ssh`` host when one is given) into a temporary file, which the command then
reads as it reads any log; the file is removed when the command is done.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from eagle_tui.errors import UsageError

if TYPE_CHECKING:
    from eagle_tui.assembly.spec import SshSpec


async def _fetch(ssh: SshSpec, name: str, choice: str, path: Path) -> int:
    from eagle_tui.assembly.remote import close_transports, open_transports
    from eagle_tui.sources.containers.cli import locate
    from eagle_tui.sources.containers.logs import dump_log

    transports = await open_transports(ssh)
    try:
        cli, _ = await locate(transports[0], name, choice)
        with open(path, "wb") as out:
            return await dump_log(cli, name, out)
    finally:
        await close_transports(transports)


@contextmanager
def fetched_log(args: argparse.Namespace) -> Iterator[Path]:
    """The container's log so far in a temporary file (removed afterwards); raises the
    container engine's or the SSH options' one-line error (an ``EagleError``)."""
    # (here, not at the top: a report of a file loads no event loop or temporary files)
    import asyncio
    import tempfile

    from eagle_tui.assembly.spec import check_ssh, ssh_spec_from_args

    ssh = ssh_spec_from_args(args)
    check_ssh(ssh)
    with tempfile.TemporaryDirectory(prefix="eagle-tui-container-") as tmp:
        path = Path(tmp) / f"{args.container}.log"
        asyncio.run(_fetch(ssh, args.container, args.container_cli, path))
        yield path


def one_log(given: object, args: argparse.Namespace, what: str) -> None:
    """A usage error unless exactly one of ``given`` (the command's FILE) and ``--container``."""
    container = getattr(args, "container", None)
    if bool(given) == bool(container):
        raise UsageError(f"give {what} or --container NAME (one of them)")
    if not container and getattr(args, "ssh", None):
        raise UsageError("--ssh reads a container's log: it needs --container NAME")


__all__ = ["fetched_log", "one_log"]
