"""A free loopback port for a server a test starts, in a range no one else picks from.

A server that starts slowly (a real engine binds its HTTP port after half a minute of loading)
finds its port taken if anything else binds it in between ("[Errno 98] address already in use").
Two kinds of neighbour pick ports on their own: every outgoing connection and ``bind(0)`` take
one from the kernel's ephemeral range, and SGLang's scheduler takes its NCCL/TCPStore port from
22000-29999 (``sglang.srt.utils.network.get_free_port_below_ephemeral``), so a second SGLang
server starting beside the first could take the first one's HTTP port. The test ports avoid both.
"""

from __future__ import annotations

import random
import socket
from pathlib import Path

_LOW, _HIGH = 20000, 32767  # below Linux's default ephemeral range (32768-60999)
ENGINE_PICKS = (22000, 29999)  # SGLang's own range for a port its child binds later


def _ephemeral() -> tuple[int, int]:
    try:
        low, high = (int(w) for w in Path("/proc/sys/net/ipv4/ip_local_port_range")
                     .read_text().split()[:2])
    except (OSError, ValueError):
        return 32768, 60999
    return low, high


def candidates(ephemeral: tuple[int, int] | None = None) -> list[int]:
    """The ports a test server may take: neither ephemeral nor in an engine's own range."""
    low, high = ephemeral or _ephemeral()

    def clear(p: int) -> bool:
        return not low <= p <= high and not ENGINE_PICKS[0] <= p <= ENGINE_PICKS[1]

    return ([p for p in range(_LOW, _HIGH + 1) if clear(p)]
            or [p for p in range(1024, low) if clear(p)] or list(range(1024, low)))


def free_port(attempts: int = 200) -> int:
    """A port that binds on 127.0.0.1 now and that no one else is given meanwhile."""
    pool = candidates()
    for port in random.sample(pool, min(attempts, len(pool))):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket() as s:  # every candidate taken: the kernel's choice, as before
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


__all__ = ["ENGINE_PICKS", "candidates", "free_port"]
