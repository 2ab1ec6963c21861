"""Undecodable bytes on their way out over SSH: an argv word, a path, an environment value.

A name that is not UTF-8 reaches Python as ``surrogateescape`` text (``$'\\xff'`` is U+DCFF).
paramiko encodes a command strictly, so such an argv word or path raised out of the transport
(an internal error of ``launch --ssh``); ``launch``'s ``--env`` values did the same locally. They
now leave as the bytes the user gave: the remote command sees them, a file with that name is
read, the server's environment holds them.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.sshd

NAMES = [b"\xff.log", b"a\x9b2J.log", b"\xc3(\xe2\x82.log", b"ok\xed\xa0\x80.log"]


async def test_undecodable_bytes_reach_the_remote_side_as_they_were(sshd: Any,
                                                                    tmp_path: Path) -> None:
    async with sshd.transport() as t:
        for raw in NAMES:
            word = os.fsdecode(raw)
            res = await t.run(["printf", "%s", word])
            assert (res.exit_code, res.stdout) == (0, raw), raw
            path = os.fsencode(tmp_path) + b"/" + raw
            Path(os.fsdecode(path)).write_bytes(b"line of " + raw + b"\n")
            assert await t.read_file(os.fsdecode(path)) == b"line of " + raw + b"\n"
            lines = [x async for x in t.stream_lines(["cat", "--", os.fsdecode(path)])]
            assert lines == [b"line of " + raw]


async def test_launch_env_values_keep_their_bytes(sshd: Any, tmp_path: Path) -> None:
    from eagle_tui.launch.members import LocalScanner
    from eagle_tui.launch.process import new_token, start_detached
    from eagle_tui.launch.stopping import stop_run
    from eagle_tui.transport.local import LocalTransport

    out = tmp_path / f"env-{uuid.uuid4().hex[:6]}"
    argv = ["sh", "-c", 'printf %s "$X" > "$0"; exec sleep 30', str(out)]
    for transport in (LocalTransport(), None):
        token = new_token()
        if transport is None:
            async with sshd.transport() as t:
                await start_detached(t, argv, cwd=str(tmp_path), log_path=str(out) + ".log",
                                     env={"X": "a\udcff\udc9bb"}, token=token)
        else:
            await start_detached(transport, argv, cwd=str(tmp_path),
                                 log_path=str(out) + ".log", env={"X": "a\udcff\udc9bb"},
                                 token=token)
        for _ in range(100):
            if out.exists() and out.stat().st_size:
                break
            await __import__("asyncio").sleep(0.05)
        assert out.read_bytes() == b"a\xff\x9bb"
        await stop_run(LocalScanner(), token, grace=2.0)
        out.unlink()


async def test_stderr_far_larger_than_the_window_while_stdout_flows(sshd: Any) -> None:
    """8 MiB on stderr interleaved with 8 MiB on stdout (both beyond paramiko's window and any
    buffer): both come back whole, in time, with the command's status."""
    script = ("i=0; while [ $i -lt 64 ]; do head -c 131072 /dev/zero | tr '\\0' e >&2; "
              "head -c 131072 /dev/zero | tr '\\0' o; i=$((i+1)); done; exit 7")
    async with sshd.transport() as t:
        res = await t.run(["sh", "-c", script], timeout=60)
    assert res.exit_code == 7
    assert res.stdout == b"o" * (64 << 17) and res.stderr == b"e" * (64 << 17)


@pytest.mark.parametrize("rc", [
    "echo 'conda: activating'; exit 3",  # the login shell's rc file exits before the command
    "echo 'noise'; exec 1>&-",  # ... closes stdout
    "printf 'EAGLE-%s-BEGIN\\n' 00000000000000000000000000000000; exit 0",  # a fake BEGIN
])
async def test_a_login_shell_that_never_runs_the_command_is_a_clear_error(
        make_sshd: Any, tmp_path: Path, rc: str) -> None:
    from eagle_tui.cli import main
    from eagle_tui.transport.ssh.frame import FrameError

    (tmp_path / "rc.sh").write_text(rc + "\n")
    srv = make_sshd(setenv={"BASH_ENV": str(tmp_path / "rc.sh")})
    async with srv.transport() as t:
        with pytest.raises(FrameError, match="did not run the command"):
            await t.run(["echo", "hello"])
    if "exit 3" in rc:  # through a command: the cause named, never an internal error (70)
        code = await __import__("asyncio").to_thread(
            main, ["lint", *srv.cli_args(), "--", "python", "-m", "sglang.launch_server",
                   "--model-path", "/m"])
        assert code == 1  # (lint's "errors found": the model path could not be checked)
