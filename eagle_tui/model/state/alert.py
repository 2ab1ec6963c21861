"""One alert rule's finding, the record the state keeps (the rules: :mod:`.alerts`)."""

from __future__ import annotations

from eagle_tui.model.events import Severity
from eagle_tui.model.launching.remedy import Remedy
from eagle_tui.model.record import Record, record


@record
class Alert(Record):
    """One alert rule's finding: kind, severity, message and the line it points at."""

    kind: str
    severity: Severity
    message: str
    lineno: int | None = None
    remedy: Remedy | None = None  # the edit of the launch command that fixes it, when known

    def as_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "severity": self.severity, "message": self.message}
