"""Every remote command eagle-tui builds keeps paths and values as arguments, never as code.

The SSH transport joins each argv with ``shlex.join`` (``tests/ssh/test_ssh_quoting.py`` proves
hostile paths reach the remote command as one word). Here: the argv each builder makes, with a
path that starts with ``-`` (an option to the remote tool if not after ``--``) and one holding
shell syntax; scripts take the path as ``$1``/``$2``, never formatted into their text.
"""

from __future__ import annotations

import asyncio
import shlex
from typing import Any

from eagle_tui.sources.logtail import file_size
from eagle_tui.transport.ssh.tail import tail_command
from eagle_tui.transport.ssh.transport import range_script

EVIL = "-n $(touch /tmp/pwned) `id`;'\"\n*.log"


class Recorder:
    host = "remote"

    def __init__(self) -> None:
        self.argv: list[list[str]] = []

    async def run(self, argv: list[str], timeout: float | None = None, **_: Any) -> Any:
        self.argv.append(list(argv))
        raise OSError("recorded")


def test_file_size_takes_the_path_as_an_argument() -> None:
    rec = Recorder()
    try:
        asyncio.run(file_size(rec, EVIL))  # type: ignore[arg-type]
    except OSError:
        pass
    ((sh, c, script, name, path),) = rec.argv
    assert (sh, c, name, path) == ("sh", "-c", "sh", EVIL) and EVIL not in script


def test_scripts_never_format_the_path_in() -> None:
    assert EVIL not in range_script(10, 20)
    words = shlex.split(tail_command(EVIL, 5, None))  # what the remote login shell runs
    assert words[:2] == ["sh", "-c"] and len(words) == 3
    assert shlex.quote(EVIL) in words[2]  # the path is one quoted word of the script
