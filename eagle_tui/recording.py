"""The ``--record`` file: every event as a JSON line, for ``replay``.

Writing it must not end the watch it records: a path that cannot be written is a one-line
refusal before anything starts (:meth:`RecordFile.create`, a :class:`~eagle_tui.errors.UsageError`),
and a write that fails later (the disk full) stops the recording alone, reported as a failed
source of that name (:data:`RECORD_SOURCE`) so the dashboard and the headless lines show it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from eagle_tui.errors import UsageError
from eagle_tui.files import os_error_message
from eagle_tui.model.events import Event, SourceFailed
from eagle_tui.model.events.codec import dumps, header_line

RECORD_SOURCE = "record"
STOPPED = "; recording stopped"


class RecordFile:
    """An open ``--record`` file."""

    def __init__(self, path: Path, record_file: IO[str]) -> None:
        self.path = path
        self._record_file: IO[str] | None = record_file

    @classmethod
    def create(cls, path: Path) -> RecordFile:
        """The file at ``path``, created (with its missing folders) and its header written."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            record_file = path.open("w", encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"--record {os_error_message(str(path), exc)}") from None
        record = cls(path, record_file)
        if failed := record._write(header_line() + "\n", 0.0):  # (the header: refused, no event)
            raise UsageError(failed[0].error.removesuffix(STOPPED))
        return record

    def write(self, events: Sequence[Event], now: float) -> list[SourceFailed]:
        """Append ``events``; a failure stops the recording and comes back as an event."""
        return self._write("".join(dumps(ev) + "\n" for ev in events), now)

    def _write(self, text: str, now: float) -> list[SourceFailed]:
        record_file = self._record_file
        if record_file is None:
            return []
        try:
            record_file.write(text)
            record_file.flush()
        except OSError as exc:
            self.close()
            error = f"--record {os_error_message(str(self.path), exc)}{STOPPED}"
            return [SourceFailed(RECORD_SOURCE, error, now)]
        return []

    def close(self) -> None:
        record_file, self._record_file = self._record_file, None
        if record_file is not None:
            with contextlib.suppress(OSError):  # (every write was flushed: nothing is left)
                record_file.close()


__all__ = ["RECORD_SOURCE", "RecordFile"]
