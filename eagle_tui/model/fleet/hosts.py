"""Which SSH destination reaches an instance's host (pure: the caller reads the files).

An ``instance`` label is what Prometheus scraped (``10.0.0.5:8000``, ``gpu-3.lan:30000``); the
host part is rarely what ``ssh`` wants (a jump host, another user, a ``Host`` alias). The
``--ssh-map FILE`` says it, one rule a line, first match wins::

    # instance or host (shell pattern)   ssh destination
    10.0.0.*                              ops@bastion-reachable-{host}
    gpu-node-3:8000                       gpu3
    *                                     {host}

``{host}`` and ``{instance}`` are replaced. Without a matching rule, a host named by a ``Host``
line of ``~/.ssh/config`` is its own destination; anything else has none. A rule's destination
must pass the grammar gate (:func:`~.grammar.checked_destination`) before anything resolves,
connects or runs with it: the label comes from Prometheus, not from the user.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence

from eagle_tui.model.boundary.grammar import checked_destination
from eagle_tui.model.fleet.snapshot import instance_host

SshRule = tuple[str, str]


def parse_ssh_map(text: str) -> list[SshRule]:
    """Rules from the file's text; ``ValueError`` names the first line that is not one."""
    rules: list[SshRule] = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) != 2:
            raise ValueError(f"ssh map line {n}: want 'PATTERN DESTINATION', got {raw.strip()!r}")
        rules.append((parts[0], parts[1]))
    return rules


def ssh_config_hosts(text: str) -> set[str]:
    """Exact host aliases of an OpenSSH client config (patterns and negations left out)."""
    out: set[str] = set()
    for raw in text.splitlines():
        parts = raw.strip().split()
        if len(parts) >= 2 and parts[0].lower() == "host":
            out.update(p for p in parts[1:] if not any(c in p for c in "*?!"))
    return out


def ssh_destination(instance: str, rules: Sequence[SshRule],
                    config_hosts: Iterable[str] = ()) -> str | None:
    """The destination of ``instance``'s host, or ``None``; raises
    :class:`~.grammar.GrammarError` when the destination it makes is not one."""
    host = instance_host(instance)
    for pattern, dest in rules:
        if fnmatch.fnmatchcase(instance, pattern) or fnmatch.fnmatchcase(host, pattern):
            return checked_destination(
                dest.replace("{host}", host).replace("{instance}", instance))
    return checked_destination(host) if host in set(config_hosts) else None


__all__ = ["SshRule", "parse_ssh_map", "ssh_config_hosts", "ssh_destination"]
