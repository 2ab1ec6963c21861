"""A multi-node run watched as one: GPUs of every host in one sample, grouped by host."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from eagle_tui.model.events import Event, GpuInfo, GpuSample
from eagle_tui.sim.gpu import install_fake_smi
from eagle_tui.sources.gpu import SmiStream
from eagle_tui.sources.multihost import MergedGpu, merge_samples


def test_merge_samples_keeps_host_order_and_lists_errors() -> None:
    a = GpuSample(1.0, "ok", (GpuInfo(0, host="a"), GpuInfo(1, host="a")), host="a",
                  backend="nvidia-smi")
    b = GpuSample(1.0, "no_driver", (), error="nvidia-smi not found", host="b",
                  backend="nvidia-smi")
    merged = merge_samples(["b", "a"], {"a": a, "b": b}, 2.0)
    assert merged.state == "ok"
    assert [(g.host, g.index) for g in merged.gpus] == [("a", 0), ("a", 1)]
    assert merged.error == "b: nvidia-smi not found"
    assert merged.backend == "nvidia-smi"
    assert merge_samples(["b"], {"b": b}, 2.0).state == "no_driver"
    assert merge_samples(["a", "b"], {}, 2.0).state == "unknown"


class _Flaky:
    """A GPU source that fails once, then reports one GPU."""

    name = "flaky"

    def __init__(self) -> None:
        self.calls = 0

    async def events(self) -> AsyncIterator[Event]:
        self.calls += 1
        if self.calls == 1:
            raise ConnectionError("link down")
        yield GpuSample(5.0, "ok", (GpuInfo(0, host="c"),), host="c")


async def test_a_failing_host_is_shown_and_retried() -> None:
    merged = MergedGpu([("c", _Flaky())], clock=lambda: 9.0)
    it = aiter(merged.events())
    first = await asyncio.wait_for(anext(it), 5)
    assert isinstance(first, GpuSample)
    assert (first.state, first.error) == ("error", "c: link down")
    second = await asyncio.wait_for(anext(it), 5)
    assert isinstance(second, GpuSample) and second.state == "ok"
    await it.aclose()  # type: ignore[attr-defined]


@pytest.mark.sshd
async def test_two_hosts_one_with_gpus_one_without(make_sshd: Any, tmp_path: Path) -> None:
    bin_dir = install_fake_smi(tmp_path / "node-a", gpus=2, seed=1)
    with_gpus = make_sshd(setenv={"PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin"})
    without = make_sshd()
    ta, tb = with_gpus.transport(), without.transport()
    async with ta, tb:
        merged = MergedGpu([(t.host, SmiStream(t, interval=0.1, name=f"gpu {t.host}"))
                            for t in (ta, tb)])
        it = aiter(merged.events())
        seen: GpuSample | None = None
        for _ in range(20):
            ev = await asyncio.wait_for(anext(it), 10)
            assert isinstance(ev, GpuSample)
            seen = ev
            if ev.gpus and ev.error:
                break
        await it.aclose()  # type: ignore[attr-defined]
    assert seen is not None
    assert seen.state == "ok"
    assert [(g.host, g.index) for g in seen.gpus] == [(ta.host, 0), (ta.host, 1)]
    assert all(g.mem_total for g in seen.gpus)
    assert seen.error == f"{tb.host}: nvidia-smi not found"


@pytest.mark.sshd
async def test_session_for_two_hosts_via_the_cli_options(
    sshd: Any, make_sshd: Any, tmp_path: Path
) -> None:
    import argparse

    from eagle_tui.assembly.build import build_session
    from eagle_tui.assembly.remote import close_transports, open_transports
    from eagle_tui.assembly.spec import spec_from_args
    from eagle_tui.commands import wait
    from eagle_tui.model.events import ConnectionState, LogLine

    other = make_sshd()
    log = tmp_path / "run.log"
    log.write_text("[2025-11-20 10:14:31] node started\n")
    parser = argparse.ArgumentParser()
    wait.register(parser.add_subparsers())
    args = parser.parse_args([
        "wait", *sshd.cli_args(), "--ssh", f"root@127.0.0.1:{other.port}",
        "--identity", str(other.client_key), "--known-hosts", str(other.known_hosts),
        "--log", str(log), "--gpu", "smi",
    ])
    spec = spec_from_args(args, "wait")
    transports = await open_transports(spec.ssh)
    hosts = [t.host for t in transports]
    assert hosts == [f"root@127.0.0.1:{sshd.port}", f"root@127.0.0.1:{other.port}"]
    try:
        session = build_session(spec, transports, batch_interval=0.02)
        names = sorted(s.name for s in session.sources)
        assert f"log {hosts[1]}" in names and "log" in names
        assert {f"ssh {h}" for h in hosts} == {n for n in names if n.startswith("ssh ")}
        events: list[Any] = []
        session.subscribe(lambda _state, batch: events.extend(batch))
        runner = asyncio.create_task(session.run())
        deadline = asyncio.get_running_loop().time() + 10
        while asyncio.get_running_loop().time() < deadline:
            lines = {e.host for e in events if isinstance(e, LogLine)}
            gpu = [e for e in events if isinstance(e, GpuSample)]
            if lines == set(hosts) and gpu:
                break
            await asyncio.sleep(0.05)
        session.stop()
        await runner
    finally:
        await close_transports(transports)
    assert {e.host for e in events if isinstance(e, LogLine)} == set(hosts)
    connected = {e.host for e in events if isinstance(e, ConnectionState)
                 and e.state == "connected"}
    assert connected == set(hosts)
    merged = [e for e in events if isinstance(e, GpuSample)][-1]
    assert merged.host == ""  # one sample for the run, per-host details inside
    assert all(h in merged.error for h in hosts)  # neither host has nvidia-smi here
