"""Every reader of a path refuses what is not a regular file, not only the tail.

The scrollback's reader (``read_range``) opened a log replaced by a FIFO with a plain
``os.open``: its thread blocked and ``q`` could not end the app. Now every reader goes through
:mod:`eagle_tui.files` (``tests/unit/structure/test_openers.py`` keeps it so), and each is checked
here against a FIFO without a writer, ``/dev/zero``, a socket and a directory: refused at once with
a line naming the kind, never read. A path swapped for a FIFO between a check and the open is
refused too (the kind is read from the open descriptor).
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eagle_tui import files
from eagle_tui.assembly.fleet import FleetSpec, load_ssh_rules
from eagle_tui.commands import bench_window, report_windows
from eagle_tui.errors import EagleError
from eagle_tui.history.store import HistoryError, RunStore
from eagle_tui.model.buffers.linewindow import IndexFile, IndexProgress, LinesRead, ReadLines, Reply
from eagle_tui.sources.linestore import Scrollback
from eagle_tui.sources.replay import detect_format
from eagle_tui.transport.base import NotRegularFile
from eagle_tui.transport.local import LocalTransport
from eagle_tui.transport.ssh.keys import is_encrypted_key
from eagle_tui.ui.config import ConfigError, load_config
from eagle_tui.ui.theme import ThemeError, user_themes

ROOT = Path(__file__).resolve().parents[2]
KIND_WORD = {"fifo": "FIFO", "zero": "character device", "socket": "socket", "dir": "directory"}
FAST_S = 1.0  # none of these may wait on what it was given: the refusal is one stat/fstat


@pytest.fixture
def kinds(tmp_path: Path) -> Iterator[dict[str, Path]]:
    fifo = tmp_path / "fifo.log"
    os.mkfifo(fifo)
    sock_path = tmp_path / "s.sock"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    (tmp_path / "dir.log").mkdir()
    yield {"fifo": fifo, "zero": Path("/dev/zero"), "socket": sock_path,
           "dir": tmp_path / "dir.log"}
    sock.close()


def _read_range(p: Path) -> object:
    return asyncio.run(LocalTransport().read_range(str(p), 0, 4096))


def _themes(p: Path) -> object:
    # a theme folder whose one theme is the odd path
    d = p.parent / f"themes-{p.name}"
    d.mkdir(exist_ok=True)
    link = d / "odd.toml"
    if not link.exists():
        link.symlink_to(p)
    return user_themes(d)


# reader → (how it is called with the path, the exception it must raise)
READERS: dict[str, tuple[Callable[[Path], object], type[BaseException]]] = {
    "files.read_bytes": (files.read_bytes, files.NotRegularFileError),
    "files.read_text": (files.read_text, files.NotRegularFileError),
    "files.pread_regular": (lambda p: files.pread_regular(str(p), 0, 10),
                            files.NotRegularFileError),
    "read_range (scrollback)": (_read_range, NotRegularFile),
    "replay detect_format": (detect_format, files.NotRegularFileError),
    "config file": (load_config, ConfigError),
    "theme file": (_themes, ThemeError),
    "--bench-results": (lambda p: report_windows.load_results([str(p)]), ValueError),
    "report bench marker scan": (report_windows.first_marker, files.NotRegularFileError),
    "bench log_interval": (bench_window.log_interval, files.NotRegularFileError),
    "--ssh-map": (lambda p: load_ssh_rules(FleetSpec("http://x", ssh_map=p)), EagleError),
    "history database": (lambda p: RunStore(p), HistoryError),
}


@pytest.mark.parametrize("kind", list(KIND_WORD))
@pytest.mark.parametrize("reader", list(READERS))
def test_every_reader_refuses_at_once(kinds: dict[str, Path], reader: str, kind: str) -> None:
    if reader == "history database" and kind in ("zero",):
        pytest.skip("the history's path is always a file in its own folder, never a device")
    call, error = READERS[reader]
    t0 = time.monotonic()
    with pytest.raises(error) as err:
        call(kinds[kind])
    assert time.monotonic() - t0 < FAST_S
    message = str(err.value)
    assert KIND_WORD[kind] in message or "is a directory" in message, message
    assert "\n" not in message


def test_an_ssh_key_that_is_a_fifo_is_not_read(kinds: dict[str, Path]) -> None:
    t0 = time.monotonic()
    assert is_encrypted_key(str(kinds["fifo"])) is False
    assert time.monotonic() - t0 < FAST_S


@pytest.mark.parametrize("kind", ["fifo", "dir"])
def test_a_path_swapped_between_check_and_open_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """The regular file passes ``check_regular``; just before the open (the window a checker
    that trusts its ``stat`` leaves) the path becomes a FIFO: the descriptor's kind decides."""
    path = tmp_path / "server.log"
    path.write_bytes(b"line\n")
    files.check_regular(path)
    real_open = os.open

    def swap_then_open(name: Any, flags: int, *a: Any) -> int:
        os.unlink(path)
        os.mkfifo(path) if kind == "fifo" else os.mkdir(path)
        return real_open(name, flags, *a)

    monkeypatch.setattr(files.os, "open", swap_then_open)
    with pytest.raises(files.NotRegularFileError, match=KIND_WORD[kind]):
        files.open_regular(path)


async def _ask(store: Scrollback, intent: IndexFile | ReadLines) -> Reply:
    got: list[Reply] = []
    done = asyncio.Event()

    def reply(r: Reply) -> None:
        got.append(r)
        if isinstance(r, LinesRead) or r.done or r.error:  # type: ignore[union-attr]
            done.set()

    store.request(intent, reply)
    await asyncio.wait_for(done.wait(), 5)
    return got[-1]


async def test_scrollback_of_a_log_replaced_by_a_fifo_answers_with_an_error(
        tmp_path: Path) -> None:
    """The dashboard's case: the log is indexed, then replaced by a FIFO; the next index and
    read answer with the error (shown as a note) instead of blocking the session thread."""
    log = tmp_path / "server.log"
    log.write_bytes(b"".join(b"line %d\n" % i for i in range(1000)))
    store = Scrollback()
    store.attach([LocalTransport()])
    first = await _ask(store, IndexFile(str(log), "", log.stat().st_size))
    assert isinstance(first, IndexProgress) and first.done
    log.unlink()
    os.mkfifo(log)
    t0 = time.monotonic()
    again = Scrollback()
    again.attach([LocalTransport()])
    answer = await _ask(again, IndexFile(str(log), "", 5000))
    assert isinstance(answer, IndexProgress) and answer.error and "FIFO" in answer.error
    read = await _ask(again, ReadLines(str(log), "", 0, 10))
    assert isinstance(read, LinesRead) and read.error and "FIFO" in read.error
    assert time.monotonic() - t0 < 2 * FAST_S
    await store.close()
    await again.close()


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(reader=st.sampled_from(sorted(READERS)), kind=st.sampled_from(["fifo", "socket", "dir"]),
       swapped=st.booleans())
def test_generated_reader_kind_and_swap(kinds: dict[str, Path], reader: str, kind: str,
                                        swapped: bool) -> None:
    """Any reader × any non-regular kind, given directly or through a symlink (a path that
    looked like a log name): always its own refusal, never a hang, never another exception."""
    call, error = READERS[reader]
    target = kinds[kind]
    if swapped:
        link = target.parent / f"link-{kind}-{reader.replace(' ', '_').replace('/', '_')}"
        if not link.is_symlink():
            link.symlink_to(target)
        target = link
    t0 = time.monotonic()
    with pytest.raises(error):
        call(target)
    assert time.monotonic() - t0 < FAST_S


def _limited() -> None:  # (in the child: a whole read of a 1 GiB file would fail)
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def _eagle(tmp: Path, *args: str, limit: bool = False) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1",
           "EAGLE_TUI_DATA_DIR": str(tmp / "data")}
    return subprocess.run([sys.executable, "-m", "eagle_tui", *args], cwd=tmp, env=env,
                          capture_output=True, text=True, timeout=60, check=False,
                          preexec_fn=_limited if limit else None)


def _reader_args(tmp: Path, flag: str, path: Path) -> list[str]:
    """A command that reads ``path`` whole for ``flag``."""
    log = tmp / "server.log"
    log.write_text("line\n")
    fleet = ["fleet", "--prometheus", "http://127.0.0.1:9", "--headless", "--count", "1"]
    return {"--bench-results": ["report", str(log), "--bench-results", str(path)],
            "--ssh-map": [*fleet, "--ssh-map", str(path)],
            "--ssh-config": [*fleet, "--ssh-config", str(path)],
            "--config": ["replay", str(log), "--headless", "--config", str(path)]}[flag]


@pytest.mark.parametrize("case", ["--bench-results", "--ssh-map", "--config", "history"])
def test_commands_refuse_with_one_line_and_exit_2(tmp_path: Path, case: str) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    args = ["runs", "list"] if case == "history" else _reader_args(tmp_path, case, fifo)
    if case == "history":
        (tmp_path / "data").mkdir()
        os.mkfifo(tmp_path / "data" / "runs.sqlite3")
    proc = _eagle(tmp_path, *args)
    assert proc.returncode == 2, proc.stderr
    assert "FIFO" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr


@pytest.mark.parametrize("case", ["--bench-results", "--ssh-map", "--ssh-config", "--config"])
def test_a_file_read_whole_is_read_within_its_limit(tmp_path: Path, case: str) -> None:
    """Files read whole were read to their end: a 1 GiB file took its size in memory and more
    (exit 70, MemoryError, under a 2 GB limit). Now each is cut at its reader's limit."""
    big = tmp_path / "big.json"
    with big.open("wb") as fh:
        fh.truncate(1 << 30)  # (sparse: no disk taken)
    proc = _eagle(tmp_path, *_reader_args(tmp_path, case, big), limit=True)
    if case == "--ssh-config":  # (a config that cannot be read names no hosts, as before)
        assert proc.returncode == 1 and "unreachable" in proc.stdout, proc.stderr
        return
    assert proc.returncode == 2, proc.stderr
    assert "too large" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
