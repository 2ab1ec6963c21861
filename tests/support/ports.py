"""A free loopback port for a server a test starts, outside the kernel's ephemeral range.

A port the kernel hands out for ``bind(0)`` lies in the ephemeral range, the same range every
outgoing connection takes its local port from: a server that starts slowly (a real engine binds
its HTTP port after half a minute of loading) then found it taken by some client in between
("[Errno 98] address already in use"). A port below that range is never given to a client.
"""

from __future__ import annotations

import random
import socket
from pathlib import Path

_LOW, _HIGH = 20000, 32767  # below Linux's default ephemeral range (32768-60999)


def _ephemeral() -> tuple[int, int]:
    try:
        low, high = (int(w) for w in Path("/proc/sys/net/ipv4/ip_local_port_range")
                     .read_text().split()[:2])
    except (OSError, ValueError):
        return 32768, 60999
    return low, high


def free_port(attempts: int = 200) -> int:
    """A port that binds on 127.0.0.1 now and that no outgoing connection is given."""
    low, high = _ephemeral()
    candidates = [p for p in range(_LOW, _HIGH + 1) if not low <= p <= high] \
        or list(range(1024, low))
    for port in random.sample(candidates, min(attempts, len(candidates))):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket() as s:  # every candidate taken: the kernel's choice, as before
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


__all__ = ["free_port"]
