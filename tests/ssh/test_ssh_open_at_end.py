"""A big log over SSH opened at its end (issue 15): ``wc -c`` finds the end, the tail starts at
a line start there, the lines before it are counted on the host and streamed through the
transport into the summary's child process: the merged state is a full parse's."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import pytest

from eagle_tui.model.events import LogOpened
from eagle_tui.model.views import figures
from eagle_tui.session import Session
from eagle_tui.sources.logtail import LogTail, file_size
from eagle_tui.sources.prefix import PrefixSummarizer
from eagle_tui.sources.replay import ReplaySource

pytestmark = [pytest.mark.sshd]

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def shown(st: Any) -> dict[str, Any]:
    base = st.log.lineno_base
    return {"phase": st.startup.phase,
            "phases": [(m.phase, m.lineno + base) for m in st.startup.phases],
            "crash": None if st.startup.crash is None else (st.startup.crash.kind,
                                                            st.startup.crash.lineno + base),
            "alerts": [(a.kind, a.message) for a in st.alerts],
            "accept_len": st.stats.accept_len.values(), "gen_tps": st.stats.gen_tps.values(),
            "tok_s": figures.tok_s(st).value, "lines": st.log.lines + base}


async def test_a_remote_log_opened_at_its_end(sshd: Any, tmp_path: Path) -> None:
    src = FIXTURES / "vllm-cpu" / "server-eagle3.log"
    log = tmp_path / "remote logs" / "server.log"
    log.parent.mkdir()
    log.write_bytes(src.read_bytes())
    full = await Session([ReplaySource(src, kind="log")], tick_interval=None).run()
    async with sshd.transport() as t:
        assert await file_size(t, str(log)) == log.stat().st_size
        assert await file_size(t, str(tmp_path / "missing.log")) is None
        fifo = tmp_path / "fifo"
        os.mkfifo(fifo)
        t0 = time.monotonic()  # (``wc`` on these never ended: a process left on the host)
        assert await file_size(t, str(fifo)) is None and await file_size(t, "/dev/zero") is None
        assert time.monotonic() - t0 < 5
        tail = LogTail(t, str(log), from_end=log.stat().st_size // 3)
        session = Session([tail], tick_interval=None, summarizer=PrefixSummarizer(t).summarize)
        runner = asyncio.create_task(session.run())
        for _ in range(2000):
            st = session.state
            if st.log.summary is not None and st.log.summary.finished and st.log.lines + (
                    st.log.lineno_base or 0) >= full.log.lines:
                break
            await asyncio.sleep(0.01)
        session.stop()
        state = await runner
    opened = tail.opened
    assert isinstance(opened, LogOpened) and opened.host == t.host and opened.start > 0
    assert log.read_bytes()[opened.start - 1] == 0x0A
    assert state.log.summary is not None and not state.log.summary.error
    assert state.log.lineno_base == log.read_bytes()[: opened.start].count(b"\n")
    assert shown(state) == shown(full)
