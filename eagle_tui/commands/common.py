"""Argparse helpers shared by the subcommands: the options that describe what to watch.

Only the command line lives here. What the options mean is decided once, when they become a
:class:`~eagle_tui.assembly.spec.DashboardSpec` (:func:`eagle_tui.assembly.spec.spec_from_args`,
which validates them); the sources, session and dashboard are built from that spec in
:mod:`eagle_tui.assembly`.
"""

from __future__ import annotations

import argparse

from eagle_tui.commands import argtypes


def add_source_args(parser: argparse.ArgumentParser) -> None:
    """Add ``--log --url --pid --record --baseline --draft-config --gpu`` and the SSH options."""
    # here, not at the top: ``report`` and ``replay`` take no --gpu and need not load the spec
    from eagle_tui.assembly.spec import GPU_CHOICES

    g = parser.add_argument_group("what to watch (at least one of --log, --url, --pid)")
    g.add_argument("--log", metavar="PATH", type=argtypes.path_text,
                   help="server log file to follow (may not exist yet)")
    g.add_argument("--url", metavar="URL",
                   help="server base URL, e.g. http://127.0.0.1:30000 (/health, /metrics, ...)")
    g.add_argument("--pid", metavar="PID", type=argtypes.pid, help="server process id to watch")
    g.add_argument("--container", metavar="NAME", type=argtypes.container, default=None,
                   help="the docker/podman container the server runs in (name or id): its "
                   "log, state, processes and URL")
    g.add_argument("--container-cli", choices=("auto", "docker", "podman"), default="auto",
                   help="the container CLI to ask (default: docker, then podman)")
    g.add_argument("--record", metavar="FILE", type=argtypes.output_file,
                   help="record every event to FILE (JSON lines) for replay")
    g.add_argument("--baseline", metavar="TOKS_PER_S", type=argtypes.rate,
                   help="non-speculative tok/s to compare against")
    g.add_argument("--baseline-run", metavar="RUN", default=None,
                   help="take the baseline tok/s from a recorded run (id, name, last, last~N)")
    g.add_argument("--draft-config", metavar="PATH", type=argtypes.path_text,
                   help="draft model directory or config.json (default: from the log/server)")
    g.add_argument("--gpu", choices=GPU_CHOICES, default="auto",
                   help="GPU sampling: NVML locally, nvidia-smi remotely (default: auto)")
    add_ssh_args(parser)


def add_container_args(parser: argparse.ArgumentParser) -> None:
    """``--container NAME|ID`` and ``--container-cli`` for the commands that read a container's
    log without watching it (``report``, ``replay``); ``add_source_args`` has them too."""
    g = parser.add_argument_group("a server in a container (docker or podman)")
    g.add_argument("--container", metavar="NAME", type=argtypes.container, default=None,
                   help="read the log of this container (name or id) so far, through its CLI")
    g.add_argument("--container-cli", choices=("auto", "docker", "podman"), default="auto",
                   help="the container CLI to ask (default: docker, then podman)")


def add_ssh_args(parser: argparse.ArgumentParser) -> None:
    """``--ssh DEST`` (repeatable) and how to reach the hosts; see ``assembly/remote.py``."""
    g = parser.add_argument_group("remote host (SSH; nothing is installed on the host)")
    g.add_argument("--ssh", metavar="DEST", action="append", default=None,
                   help="watch the server on DEST: [user@]host[:port] or a Host from "
                   "~/.ssh/config; repeat for a multi-node run (--url is on the first host)")
    g.add_argument("--identity", metavar="FILE", type=argtypes.path_text,
                   action="append", default=None,
                   help="private key file to offer (repeatable; ssh-agent keys are offered too)")
    g.add_argument("--known-hosts", metavar="FILE", type=argtypes.any_path,
                   action="append", default=None,
                   help="trust the host keys in FILE as well as ~/.ssh/known_hosts; "
                   "--accept-new-host-key then writes to the first such FILE")
    g.add_argument("--accept-new-host-key", action="store_true",
                   help="accept and remember the key of a host seen for the first time (like "
                   "OpenSSH's accept-new); a changed key is always refused")
    g.add_argument("--ssh-config", metavar="FILE", type=argtypes.any_path, default=None,
                   help="OpenSSH client config to read (default ~/.ssh/config)")


def add_ui_args(parser: argparse.ArgumentParser) -> None:
    """``--config --theme --max-lines`` for the commands that open the dashboard."""
    g = parser.add_argument_group("dashboard")
    g.add_argument("--config", metavar="PATH", type=argtypes.any_path, default=None,
                   help="config file (default: $EAGLE_TUI_CONFIG or the platform config dir)")
    g.add_argument("--theme", metavar="NAME", default=None,
                   help="eagle-dark (default), eagle-light, eagle-high-contrast, or a user theme")
    g.add_argument("--max-lines", metavar="N", type=argtypes.log_lines, default=None,
                   help="log lines kept in memory (default 10,000)")


__all__ = ["add_container_args", "add_source_args", "add_ssh_args", "add_ui_args"]
