"""A log streamed at 10,000 lines/s over SSH survives 20 forced faults: nothing lost or repeated.

The faults are the three ways a remote watch dies in practice:

* ``kill``: the SSH session's processes are SIGKILLed (the client sees EOF at once);
* ``restart``: sshd itself is stopped with every session and started again (the client's
  reconnects are refused until it is back);
* ``freeze``: the session is SIGSTOPped — a hung host or a dead network, where no EOF ever comes
  and only the application-level keepalive can notice.

Every line carries its sequence number; the consumer checks them as they arrive, so one lost or
duplicated line anywhere fails the test, and each recovery (fault → first bytes from the new
connection) must take ≤ 5 s. The measured figures are printed (``pytest -s``) and recorded in
docs/reliability.md.
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from eagle_tui.transport.ssh import SshTransport

pytestmark = [pytest.mark.sshd, pytest.mark.slow]

RATE = 10_000  # lines per second
FAULTS = 20
MAX_RECOVERY_S = 5.0
EACH_ENV = "EAGLE_TUI_FAULTS_EACH"

# Appends "<seq> <padding>\n" lines at RATE lines/s in 10 ms batches until its stdin closes, then
# prints how many lines it wrote.
WRITER = r"""
import sys, time, os, select
path, rate = sys.argv[1], int(sys.argv[2])
pad = "x" * 40
n = 0
start = time.monotonic()
with open(path, "ab", buffering=0) as fh:
    while True:
        if select.select([sys.stdin], [], [], 0)[0]:
            break
        due = int((time.monotonic() - start) * rate)
        if due > n:
            fh.write("".join(f"{i:09d} {pad}\n" for i in range(n, due)).encode())
            n = due
        time.sleep(0.01)
print(n, flush=True)
"""


class SeqChecker:
    """Checks line sequence numbers incrementally: counts lost, duplicated and malformed lines."""

    def __init__(self) -> None:
        self.next = 0
        self.lost = 0
        self.dup = 0
        self.bad = 0
        self.partial = b""
        self.last_data = 0.0

    def feed(self, data: bytes) -> None:
        self.last_data = time.monotonic()
        buf = self.partial + data
        *lines, self.partial = buf.split(b"\n")
        for line in lines:
            head = line[:9]
            if len(line) != 50 or not head.isdigit():
                self.bad += 1
                continue
            seq = int(head)
            if seq == self.next:
                self.next += 1
            elif seq > self.next:
                self.lost += seq - self.next
                self.next = seq + 1
            else:
                self.dup += 1


def schedule() -> list[str]:
    """20 faults of the three kinds, shuffled; ``EAGLE_TUI_FAULTS_EACH=N``: N of each (the full
    matrix of docs/reliability.md, ``benchmarks/bench_ssh_faults.py``: 20 of each)."""
    each = int(os.environ.get(EACH_ENV, "0") or 0)
    kinds = (["kill"] * each + ["restart"] * each + ["freeze"] * each if each
             else ["kill"] * 7 + ["restart"] * 6 + ["freeze"] * 7)
    random.Random(6).shuffle(kinds)
    assert len(kinds) == (3 * each or FAULTS)
    return kinds


async def inject(srv: Any, kind: str) -> None:
    if kind == "kill":
        assert srv.kill_sessions() > 0
    elif kind == "restart":
        await asyncio.to_thread(srv.restart)
    else:
        assert srv.freeze_sessions() > 0


async def test_tail_survives_20_faults_at_10k_lines_per_second(
    make_sshd: Any, tmp_path: Path
) -> None:
    srv = make_sshd()
    log = tmp_path / "server.log"
    log.touch()
    transport: SshTransport = srv.transport()
    await transport.connect()
    connects = 0
    lost_at: list[float] = []  # when the transport noticed each loss

    async def watch_state() -> None:
        nonlocal connects
        async for ev in transport.connection_events():
            if ev.state == "connected":
                connects += 1
            elif ev.state == "reconnecting" and ev.attempt == 1:
                lost_at.append(time.monotonic())

    checker = SeqChecker()

    async def consume() -> None:
        async for chunk in transport.tail(str(log)):
            assert not chunk.restarted, chunk
            checker.feed(chunk.data)

    state_task = asyncio.create_task(watch_state())
    consumer = asyncio.create_task(consume())
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(log), str(RATE)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    recoveries: list[tuple[str, float]] = []
    detections: list[tuple[str, float]] = []
    damage: dict[str, list[int]] = {}  # kind → [lost, duplicated] seen while recovering from it
    try:
        await asyncio.sleep(0.5)
        assert checker.next > 0, "no data before the first fault"
        kinds = schedule()
        for kind in kinds:
            before = connects
            lost0, dup0 = checker.lost, checker.dup
            noticed = len(lost_at)
            t_fault = time.monotonic()
            await inject(srv, kind)
            # recovered = a new connection is up and data flows on it again
            while True:
                assert time.monotonic() - t_fault < MAX_RECOVERY_S + 5, f"no recovery from {kind}"
                if connects > before and checker.last_data > t_fault:
                    t_conn = time.monotonic()
                    seen = checker.next
                    while checker.next == seen and time.monotonic() - t_conn < 5:
                        await asyncio.sleep(0.005)
                    break
                await asyncio.sleep(0.005)
            recoveries.append((kind, time.monotonic() - t_fault))
            assert len(lost_at) == noticed + 1, "each fault is one loss"
            detections.append((kind, lost_at[-1] - t_fault))
            srv.thaw_and_kill_frozen()
            assert not consumer.done(), consumer
            await asyncio.sleep(0.4)
            d = damage.setdefault(kind, [0, 0])
            d[0] += checker.lost - lost0
            d[1] += checker.dup - dup0
        assert writer.stdin is not None and writer.stdout is not None
        writer.stdin.close()
        total = int(writer.stdout.read().strip())
        deadline = time.monotonic() + 20
        while checker.next < total and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
    finally:
        if writer.poll() is None:
            writer.kill()
        writer.wait()
        consumer.cancel()
        await transport.close()
        state_task.cancel()

    lines = [
        f"{len(recoveries)} faults, {total} lines at {RATE}/s: lost={checker.lost} "
        f"dup={checker.dup} malformed={checker.bad} received={checker.next}"
    ]
    for kind, (lost, dup) in sorted(damage.items()):
        lines.append(f"  damage    {kind:8s} lost={lost} dup={dup}")
    for label, figures in (("noticed", detections), ("recovered", recoveries)):
        by_kind: dict[str, list[float]] = {}
        for kind, secs in figures:
            by_kind.setdefault(kind, []).append(secs)
        for kind, values in sorted(by_kind.items()):
            lines.append(
                f"  {label:9s} {kind:8s} n={len(values)} median={statistics.median(values):.3f}s "
                f"max={max(values):.3f}s"
            )
    report = "\n".join(lines)
    print("\n" + report)
    if out := os.environ.get("EAGLE_TUI_FAULT_REPORT"):
        Path(out).write_text(report + "\n")

    assert len(recoveries) == len(kinds)
    assert checker.lost == 0
    assert checker.dup == 0
    assert checker.bad == 0
    assert checker.next == total
    assert max(secs for _, secs in recoveries) <= MAX_RECOVERY_S, recoveries
    assert max(secs for _, secs in detections) <= 3.0, detections
