"""The sources behind the startup verdict, with real processes and files: the process tree's
reads and pids (psutil), and a Hugging Face download growing in the cache."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from eagle_tui.model.events import DownloadSample, ProcessSample
from eagle_tui.sources.download import DownloadWatcher
from eagle_tui.sources.process import ProcessWatcher
from eagle_tui.transport.local import LocalTransport

PY = sys.executable


async def test_tree_sample_has_pids_and_bytes_read(tmp_path: Path) -> None:
    blob = tmp_path / "weights.bin"
    blob.write_bytes(b"\0" * (4 << 20))
    code = ("import subprocess, sys, time\n"
            "kid = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(5)'])\n"
            f"open({str(blob)!r}, 'rb').read()\n"
            "time.sleep(5)\n")
    proc = subprocess.Popen([PY, "-c", code])
    try:
        watcher = ProcessWatcher(proc.pid, sample_interval=0.2)
        found: ProcessSample | None = None
        async for ev in watcher.events():
            if isinstance(ev, ProcessSample) and len(ev.pids) >= 2 and (ev.read_bytes or 0) >= (
                    4 << 20):
                found = ev
                break
        assert found is not None and found.pids[0] == proc.pid
        assert found.num_procs == len(found.pids)
    finally:
        proc.kill()
        proc.wait()


async def test_download_watcher_sees_incomplete_files_grow_and_finish(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    blobs = tmp_path / "models--Qwen--Qwen3-8B" / "blobs"
    blobs.mkdir(parents=True)
    part = blobs / "0123abcd.incomplete"
    part.write_bytes(b"x" * 1000)
    watcher = DownloadWatcher(LocalTransport(), interval=0.05)
    seen: list[DownloadSample] = []

    async def run() -> None:
        async for ev in watcher.events():
            assert isinstance(ev, DownloadSample)
            seen.append(ev)
            if len(seen) == 1:
                part.write_bytes(b"x" * 5000)
            elif seen[-1].bytes == 5000 and part.exists():
                part.rename(blobs / "0123abcd")  # huggingface_hub's rename when complete
            elif seen[-1].files == 0:
                return

    await asyncio.wait_for(run(), 10.0)
    assert seen[0].files == 1 and seen[0].repos == ("Qwen/Qwen3-8B",)
    assert seen[0].root == str(tmp_path)
    assert any(s.bytes == 5000 for s in seen) and seen[-1].files == 0
