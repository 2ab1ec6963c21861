"""The transports that reach what a spec watches: the local machine, or its ``--ssh`` hosts.

Every command that watches a server (``wait``, ``watch``, the dashboard) takes the same options
(``commands/common.py``), which become the spec's :class:`~eagle_tui.assembly.spec.SshSpec`:

* ``--ssh DEST`` (repeatable): ``[user@]host[:port]`` or a ``~/.ssh/config`` Host. Without it the
  server is local. Repeated, it watches a multi-node run as one: the log and GPUs of every host,
  the HTTP endpoints (``--url``) of the first;
* ``--identity FILE`` (repeatable), ``--known-hosts FILE`` (repeatable, in addition to
  ``~/.ssh/known_hosts``), ``--accept-new-host-key``, ``--ssh-config FILE``.

No option takes a password or passphrase: keys come from ssh-agent or key files, so no secret is
ever in argv, the environment or a log.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from typing import TextIO

from eagle_tui.assembly.spec import SshSpec
from eagle_tui.console import warn
from eagle_tui.model.boundary.termtext import inert_lines
from eagle_tui.transport.base import HostKeyError, Transport, TransportError
from eagle_tui.transport.local import STREAM_POLL_S, LocalTransport


def make_transports(ssh: SshSpec, *, screen: bool = False) -> list[Transport]:
    """One transport per ``--ssh`` host (in order), or the local transport without ``--ssh``.

    The spec was checked (:func:`~eagle_tui.assembly.spec.check_ssh`) when it was built.
    Nothing connects yet: see :func:`connect_transports`. ``screen``: for the dashboard, whose
    local log is read on its repaint grid (a headless command prints each line as it comes).
    """
    if not ssh.dests:
        return [LocalTransport(stream_interval=STREAM_POLL_S if screen else None)]
    from eagle_tui.transport.ssh import SshTransport
    from eagle_tui.transport.ssh.link import SshOptions

    options = SshOptions(
        identity_files=ssh.identity_files,
        known_hosts_files=ssh.known_hosts_files,
        accept_new_host_key=ssh.accept_new_host_key,
        config_path=ssh.config_path,
        outside=ssh.outside,
        connect_timeout=ssh.connect_timeout,
    )
    return [SshTransport(dest, options) for dest in ssh.dests]


def one_transport(ssh: SshSpec) -> Transport:
    """The transport of a command that works on one host (``lint``, ``launch``, ``stop``...):
    the first ``--ssh`` host, or this machine. Raises ``UsageError`` for bad SSH options."""
    from eagle_tui.assembly.spec import check_ssh

    check_ssh(ssh)
    return make_transports(ssh)[0]


async def connect_one(transport: Transport, timeout: float = 30.0) -> None:
    """Connect now, without retrying: a one-shot command reports a dead host at once."""
    connect = getattr(transport, "connect", None)
    if connect is not None:
        await asyncio.wait_for(connect(retry=False), timeout)


async def open_transports(ssh: SshSpec, err: TextIO = sys.stderr, *,
                          screen: bool = False) -> list[Transport]:
    """:func:`make_transports` + :func:`connect_transports`; closes them again on a refusal."""
    transports = make_transports(ssh, screen=screen)
    try:
        await connect_transports(transports, err)
    except BaseException:
        await close_transports(transports)
        raise
    return transports


async def connect_transports(transports: Sequence[Transport], err: TextIO = sys.stderr) -> None:
    """Open every SSH connection before the session starts.

    A host-key or authentication problem is final: it is raised (the command prints it and
    exits 2). Anything else (host down, sshd not up yet) is reported on ``err`` and retried in
    the background; the sources wait for the connection.
    """
    from eagle_tui.transport.ssh import SshTransport
    from eagle_tui.transport.ssh.link import AuthError

    for tr in transports:
        if not isinstance(tr, SshTransport):
            continue
        try:
            await tr.connect(retry=True)
        except (HostKeyError, AuthError):
            raise
        except TransportError as exc:
            warn(inert_lines(f"eagle-tui: {tr.host}: {exc} (retrying)"), err, flush=True)


async def close_transports(transports: Sequence[Transport]) -> None:
    for tr in transports:
        await tr.close()


__all__ = [
    "close_transports",
    "connect_one",
    "connect_transports",
    "make_transports",
    "one_transport",
    "open_transports",
]
