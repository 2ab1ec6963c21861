"""The ``--record`` file (``eagle_tui/recording.py``): a path that cannot be written is a
one-line refusal, and a write that fails mid-run (``/dev/full``: a real ENOSPC) stops the
recording alone, shown as a failed source; the watch goes on."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from eagle_tui.errors import UsageError
from eagle_tui.model.events import LogLine, SourceFailed, Tick
from eagle_tui.recording import RECORD_SOURCE, RecordFile
from eagle_tui.session import Session
from eagle_tui.sources.scripted import ScriptedSource

FULL = Path("/dev/full")
needs_full = pytest.mark.skipif(not os.access(FULL, os.W_OK), reason="no /dev/full")


def test_a_path_that_cannot_be_written_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    for bad in (tmp_path / "afile" / "x.rec", tmp_path / "afile" / "deeper" / "x.rec"):
        with pytest.raises(UsageError) as err:
            RecordFile.create(bad)
        assert "\n" not in str(err.value) and str(bad) in str(err.value)


@needs_full
def test_a_header_that_cannot_be_written_is_refused() -> None:
    with pytest.raises(UsageError, match="No space left"):
        RecordFile.create(FULL)


@needs_full
def test_a_failed_write_stops_the_recording_and_says_so(tmp_path: Path) -> None:
    record = RecordFile(tmp_path / "x.rec", FULL.open("w", encoding="utf-8"))
    failed = record.write([Tick(1.0)], 5.0)
    assert [(f.source, f.t, f.retry_in_s) for f in failed] == [(RECORD_SOURCE, 5.0, None)]
    assert "No space left on device; recording stopped" in failed[0].error
    assert record.write([Tick(2.0)], 6.0) == []  # stopped: nothing more is tried
    record.close()


@needs_full
async def test_the_session_goes_on_when_its_record_fails(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "x.rec"
    # the file opens as the session asks, then every write meets a full disk
    monkeypatch.setattr(RecordFile, "create", classmethod(
        lambda cls, p: cls(p, FULL.open("w", encoding="utf-8"))))
    lines = [LogLine(i, f"line {i}") for i in range(1, 6)]
    session = Session([ScriptedSource(list(lines), 0.002)], record=path, tick_interval=None,
                      batch_interval=0.0)
    state = await session.run()
    assert state.log.lines == 5  # every event was still folded
    (failure,) = state.live.failures
    assert isinstance(failure, SourceFailed) and failure.source == RECORD_SOURCE
    assert str(path) in failure.error
