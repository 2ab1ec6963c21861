"""The simulator's fake nvidia-smi prints what the real one prints, and the real parser reads it.

Real parts: the executable is written to disk and run as a process (as the GPU source runs it);
its output is parsed by ``eagle_tui.sources.gpu.parse_smi_line`` and streamed through the real
``SmiStream`` over the real ``LocalTransport``.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import time
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import cast

import psutil
import pytest

from eagle_tui.model.events import Event, GpuSample
from eagle_tui.sim.gpu import STATE_FILE, GpuModel, install_fake_smi, write_state
from eagle_tui.sim.scenario import GPU_TOTAL_MIB, make_config
from eagle_tui.sim.timeline import build_timeline
from eagle_tui.sources.gpu import SMI_FIELDS, SmiStream, parse_smi_line
from eagle_tui.transport.local import LocalTransport

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "nvml"
MIB = 1 << 20


@pytest.fixture
def smi(tmp_path: Path) -> Path:
    return install_fake_smi(tmp_path, gpus=8, seed=3) / "nvidia-smi"


def run_smi(smi: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(smi), *args], capture_output=True, text=True, timeout=20)


def test_query_output_parses_with_the_real_parser(smi: Path) -> None:
    res = run_smi(smi, f"--query-gpu={SMI_FIELDS}", "--format=csv,noheader,nounits")
    assert res.returncode == 0, res.stderr
    infos = [parse_smi_line(line) for line in res.stdout.splitlines()]
    assert [i.index for i in infos if i] == list(range(8))
    first = infos[0]
    assert first is not None
    assert first.name == "NVIDIA H200"
    assert first.mem_total == GPU_TOTAL_MIB * MIB
    assert first.mem_used == 0  # idle GPUs show 0 MiB, like the recorded H200s
    assert first.power_limit_w == 700.0
    assert first.sm_mhz == 345
    assert first.uuid.startswith("GPU-") and len(first.uuid) == 40
    assert len({i.uuid for i in infos if i}) == 8


def test_header_and_units_match_the_recorded_output(smi: Path) -> None:
    recorded = (FIXTURES / "nvidia-smi-query.txt").read_text().splitlines()
    header_recorded = next(line for line in recorded if line.startswith("index, uuid"))
    res = run_smi(smi, f"--query-gpu={SMI_FIELDS}", "--format=csv")
    lines = res.stdout.splitlines()
    assert lines[0] == header_recorded
    # values carry the same units in the same places as the real tool's
    fields = lines[1].split(", ")
    assert fields[3].endswith(" MiB") and fields[5].endswith(" %")
    assert fields[8].endswith(" W") and fields[10].endswith(" MHz")
    assert parse_smi_line(lines[1]) is not None


def test_memory_follows_the_timeline_and_compute_apps(smi: Path, tmp_path: Path) -> None:
    cfg = make_config("sglang", "healthy", gpus=8)
    steps = [s for s in build_timeline(cfg).steps if s.mem_gib is not None]
    model = GpuModel(8, seed=3, pids=tuple(range(4000, 4008)))
    seen: list[int] = []
    for step in steps:
        assert step.mem_gib is not None
        model.set_memory(step.mem_gib)
        if step.label:
            model.set_label(step.label)
        write_state(tmp_path / STATE_FILE, model.sample())
        out = run_smi(smi, f"--query-gpu={SMI_FIELDS}", "--format=csv,noheader,nounits").stdout
        info = parse_smi_line(out.splitlines()[0])
        assert info is not None and info.mem_used is not None
        seen.append(info.mem_used // MIB)
        if len(seen) > 12:
            break
    assert seen == sorted(seen), "memory only grows while the server loads"
    assert seen[-1] > seen[1] > 0
    apps = run_smi(smi, "--query-compute-apps=pid,process_name,used_gpu_memory,gpu_uuid",
                   "--format=csv,noheader,nounits").stdout.splitlines()
    assert [int(a.split(", ")[0]) for a in apps] == list(range(4000, 4008))


def test_kv_cache_allocation_is_one_big_jump() -> None:
    cfg = make_config("sglang", "healthy", gpus=8)
    mems = [s.mem_gib[0] for s in build_timeline(cfg).steps if s.mem_gib is not None]
    jumps = [b - a for a, b in itertools.pairwise(mems)]
    assert max(jumps) == pytest.approx(cfg.kv_gib, rel=0.01)
    assert all(j >= -1e-9 for j in jumps)
    assert 100 < mems[-1] < 140  # a well-used 140 GiB H200, as with mem_fraction_static 0.88


def test_streaming_loop_and_errors(smi: Path, tmp_path: Path) -> None:
    proc = subprocess.Popen([str(smi), f"--query-gpu={SMI_FIELDS}", "--format=csv,noheader,nounits",
                             "-lms", "50"], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(8 * 3)]
        assert all(parse_smi_line(line) is not None for line in lines)
        (tmp_path / STATE_FILE).unlink()  # the simulator (the "driver") is gone
        assert proc.wait(timeout=10) == 9
        assert "couldn't communicate with the NVIDIA driver" in proc.stdout.read()
    finally:
        proc.kill()
        proc.wait()
    bad = run_smi(smi, "--query-gpu=index,bogus", "--format=csv")
    assert bad.returncode == 2 and 'Field "bogus" is not a valid field to query.' in bad.stdout
    assert run_smi(smi, "--frobnicate").returncode == 2
    listing = run_smi(smi, "-L")
    assert listing.returncode == 9  # state file removed above: no driver


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_loop_ends_when_its_parent_dies(smi: Path, tmp_path: Path) -> None:
    """A watcher killed with SIGKILL cannot stop its nvidia-smi; the loop must notice itself."""
    out = tmp_path / "out.txt"
    code = ("import subprocess, sys, time\n"
            f"p = subprocess.Popen([{str(smi)!r}, '--query-gpu=index', '--format=csv', '-lms', "
            f"'50'], stdout=open({str(out)!r}, 'w'))\n"
            "print(p.pid, flush=True)\ntime.sleep(60)\n")
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        pid = int(parent.stdout.readline())
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and "index" not in out.read_text():
            time.sleep(0.05)
        assert "index" in out.read_text()
        assert not _gone(pid)
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not _gone(pid):
        time.sleep(0.05)
    assert _gone(pid)


async def test_smi_stream_source_reads_the_fake(smi: Path, monkeypatch: pytest.MonkeyPatch,
                                                tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", f"{smi.parent}:{Path('/usr/bin')}:{Path('/bin')}")
    model = GpuModel(8, seed=3, pids=tuple(range(100, 108)))
    model.set_label("ready")
    model.set_memory((120.0,) * 8)
    write_state(tmp_path / STATE_FILE, model.sample(running=2))
    transport = LocalTransport()
    source = SmiStream(transport, interval=0.1)
    try:
        agen = cast(AsyncGenerator[Event, None], source.events())
        sample = await anext(agen)
        await agen.aclose()
    finally:
        await transport.close()
    assert isinstance(sample, GpuSample)
    assert sample.state == "ok" and sample.backend == "nvidia-smi"
    gpus = sample.gpus
    assert len(gpus) == 8
    assert all(g.mem_used == round((120.0 - 0.6) * 1024) * MIB for g in gpus)
    assert all(g.util_gpu is not None and 27 <= g.util_gpu <= 50 for g in gpus)


def test_state_file_is_valid_json_payload(tmp_path: Path) -> None:
    model = GpuModel(2, seed=1)
    write_state(tmp_path / "s.json", model.sample())
    data = json.loads((tmp_path / "s.json").read_text())
    assert [g["index"] for g in data["gpus"]] == [0, 1]
    assert not list(tmp_path.glob(".*tmp"))
