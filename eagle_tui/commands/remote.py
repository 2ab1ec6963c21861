"""``--ssh`` and friends: which hosts a command watches, and the transports that reach them.

Every command that watches a server (``wait``, ``watch``, the dashboard) takes the same options,
added by :func:`add_ssh_args` from :func:`eagle_tui.commands.common.add_source_args`:

* ``--ssh DEST`` (repeatable): ``[user@]host[:port]`` or a ``~/.ssh/config`` Host. Without it the
  server is local. Repeated, it watches a multi-node run as one: the log and GPUs of every host,
  the HTTP endpoints (``--url``) of the first;
* ``--identity FILE`` (repeatable), ``--known-hosts FILE`` (repeatable, in addition to
  ``~/.ssh/known_hosts``), ``--accept-new-host-key``, ``--ssh-config FILE``.

No option takes a password or passphrase: keys come from ssh-agent or key files, so no secret is
ever in argv, the environment or a log.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from eagle_tui.transport.base import HostKeyError, Transport, TransportError
from eagle_tui.transport.local import LocalTransport


class SshUsageError(ValueError):
    """An ``--ssh`` option that cannot work (bad DEST, unreadable config, a host given twice)."""


def add_ssh_args(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("remote host (SSH; nothing is installed on the host)")
    g.add_argument("--ssh", metavar="DEST", action="append", default=None,
                   help="watch the server on DEST: [user@]host[:port] or a Host from "
                   "~/.ssh/config; repeat for a multi-node run (--url is on the first host)")
    g.add_argument("--identity", metavar="FILE", action="append", default=None,
                   help="private key file to offer (repeatable; ssh-agent keys are offered too)")
    g.add_argument("--known-hosts", metavar="FILE", type=Path, action="append", default=None,
                   help="trust the host keys in FILE as well as ~/.ssh/known_hosts; "
                   "--accept-new-host-key then writes to the first such FILE")
    g.add_argument("--accept-new-host-key", action="store_true",
                   help="accept and remember the key of a host seen for the first time (like "
                   "OpenSSH's accept-new); a changed key is always refused")
    g.add_argument("--ssh-config", metavar="FILE", type=Path, default=None,
                   help="OpenSSH client config to read (default ~/.ssh/config)")


def ssh_dests(args: argparse.Namespace) -> list[str]:
    return list(getattr(args, "ssh", None) or [])


def check_ssh_args(args: argparse.Namespace) -> None:
    """Raise :class:`SshUsageError` unless the SSH options can work.

    Every DEST is resolved (``~/.ssh/config``) here, so a typo is a usage error before anything
    starts; nothing connects yet.
    """
    dests = ssh_dests(args)
    if not dests:
        if getattr(args, "identity", None) or getattr(args, "known_hosts", None) or getattr(
            args, "accept_new_host_key", False
        ):
            raise SshUsageError("--identity/--known-hosts/--accept-new-host-key need --ssh DEST")
        return
    if len(set(dests)) != len(dests):
        raise SshUsageError(f"the same --ssh host is given twice: {', '.join(dests)}")
    config = getattr(args, "ssh_config", None)
    if config is not None and not config.is_file():
        raise SshUsageError(f"--ssh-config {config}: no such file")
    for path in getattr(args, "identity", None) or ():
        if not Path(path).expanduser().is_file():
            raise SshUsageError(f"--identity {path}: no such file")
    for kh in getattr(args, "known_hosts", None) or ():
        if kh.is_dir():
            raise SshUsageError(f"--known-hosts {kh}: is a directory")
    from eagle_tui.transport.ssh.config import DestinationError, resolve

    for dest in dests:
        try:
            resolve(dest, config)
        except DestinationError as exc:
            raise SshUsageError(str(exc)) from exc


def make_transports(args: argparse.Namespace) -> list[Transport]:
    """One transport per ``--ssh`` host (in order), or the local transport without ``--ssh``.

    Call :func:`check_ssh_args` first. Nothing connects yet: see :func:`connect_transports`.
    """
    dests = ssh_dests(args)
    if not dests:
        return [LocalTransport()]
    from eagle_tui.transport.ssh import SshTransport
    from eagle_tui.transport.ssh.link import SshOptions

    options = SshOptions(
        identity_files=tuple(getattr(args, "identity", None) or ()),
        known_hosts_files=tuple(getattr(args, "known_hosts", None) or ()),
        accept_new_host_key=bool(getattr(args, "accept_new_host_key", False)),
        config_path=getattr(args, "ssh_config", None),
    )
    return [SshTransport(dest, options) for dest in dests]


async def open_transports(args: argparse.Namespace, err: TextIO = sys.stderr) -> list[Transport]:
    """:func:`make_transports` + :func:`connect_transports`; closes them again on a refusal."""
    transports = make_transports(args)
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
            print(f"eagle-tui: {tr.host}: {exc} (retrying)", file=err, flush=True)


async def close_transports(transports: Sequence[Transport]) -> None:
    for tr in transports:
        await tr.close()


__all__ = [
    "SshUsageError",
    "add_ssh_args",
    "check_ssh_args",
    "close_transports",
    "connect_transports",
    "make_transports",
    "open_transports",
    "ssh_dests",
]
