"""Hostile paths over SSH: every remote argument is quoted, nothing in a name is ever executed.

Each name below would run a command, expand a variable, split into two words or end the
command line if it reached the remote shell unquoted. The files live in a temp dir; the
"payloads" would create marker files, and the test checks none appeared anywhere we look.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pytest

from eagle_tui.transport.ssh.tail import tail_command

pytestmark = pytest.mark.sshd

MARK = f"PWNED-{uuid.uuid4().hex[:8]}"

HOSTILE = [
    "with space.log",
    "quote'single.log",
    'quote"double.log',
    f"semi;touch {MARK}-semi.log",
    f"$(touch {MARK}-subst).log",
    f"`touch {MARK}-tick`.log",
    f"new\nline;touch {MARK}-nl.log",
    "-n 5 leading-dash.log",
    "star*glob?[a].log",
    "back\\slash\\n.log",
    "$HOME and ${PATH}.log",
    "tab\there.log",
    f"amp&&touch {MARK}-amp||.log",
    f"pipe|touch {MARK}-pipe>.log",
    "ünïcödé ✓.log",
]


def markers(tree: Path, *dirs: Path) -> list[Path]:
    """Marker files in ``tree`` (recursively) or directly in ``dirs`` (the remote cwd, /tmp)."""
    found = [p for p in tree.rglob("*") if MARK in p.name and "touch" not in p.name]
    for d in dirs:
        if d.is_dir():
            found += [p for p in d.iterdir() if MARK in p.name]
    return found


@pytest.fixture
def hostile_files(tmp_path: Path) -> list[Path]:
    base = tmp_path / "dir with 'quotes' and $(x)"
    base.mkdir()
    files = []
    for i, name in enumerate(HOSTILE):
        path = base / name
        path.write_bytes(f"line {i}\n{name}\n".encode())
        files.append(path)
    return files


async def test_run_read_file_and_stream_with_hostile_paths(
    sshd: Any, hostile_files: list[Path], tmp_path: Path
) -> None:
    async with sshd.transport() as t:
        for path in hostile_files:
            want = path.read_bytes()
            assert await t.read_file(str(path)) == want, path.name
            res = await t.run(["cat", "--", str(path)])
            assert (res.exit_code, res.stdout) == (0, want), path.name
            lines = [x async for x in t.stream_lines(["cat", "--", str(path)])]
            assert b"\n".join(lines) + b"\n" == want, path.name
        # an argument that *looks* like shell is just text
        res = await t.run(["echo", f"$(touch {MARK}-echo)", "; rm -rf /", "`id`"])
        assert res.stdout == f"$(touch {MARK}-echo) ; rm -rf / `id`\n".encode()
        home = (await t.run(["sh", "-c", "pwd"])).stdout.decode().strip()
    assert markers(tmp_path, Path(home), Path("/tmp")) == []


async def test_tail_with_hostile_paths(
    sshd: Any, hostile_files: list[Path], tmp_path: Path
) -> None:
    async with sshd.transport() as t:
        for path in hostile_files:
            it = aiter(t.tail(str(path)))
            chunk = await asyncio.wait_for(anext(it), 5)
            assert chunk.data == path.read_bytes(), path.name
            with path.open("ab") as fh:
                fh.write(b"more\n")
            chunk = await asyncio.wait_for(anext(it), 5)
            assert chunk.data == b"more\n", path.name
            await it.aclose()  # type: ignore[attr-defined]
    assert markers(tmp_path, Path("/tmp")) == []


def test_tail_command_quotes_the_path_for_sh() -> None:
    import shlex
    import subprocess

    # The command line is what the remote login shell gets; parse it like sh would and check the
    # path survives as one literal word inside the script.
    for name in HOSTILE:
        cmd = tail_command(f"/tmp/x/{name}", 12, 34)
        words = shlex.split(cmd)
        assert words[:2] == ["sh", "-c"]
        script = words[2]
        assert f"f={shlex.quote('/tmp/x/' + name)};" in script
        # sh -n: the script parses, whatever the name holds
        assert subprocess.run(["sh", "-n", "-c", script]).returncode == 0, name
    with pytest.raises(ValueError):
        tail_command("/x", -1, None)
