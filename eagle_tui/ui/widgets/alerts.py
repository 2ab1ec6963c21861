"""The alerts pane: the alert rules' output, root cause first, coloured by severity.

The rules (``eagle_tui.model.views.alerts``) are re-evaluated on every batch and return the alerts
that fire *now*, ordered by severity. A failure's first alert is usually its cause (a crash, then
``health_lost`` and ``process_exited`` as its consequences), so the pane lists alerts in the order
they first fired, oldest on top: newest first buried the root cause under what followed. That
order needs memory the state does not keep, so the pane remembers when each alert kind first
fired (in batch order) and forgets a kind once it clears.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content
from textual.reactive import var

from eagle_tui.model.state.alert import Alert
from eagle_tui.ui.binding import RecordView, record
from eagle_tui.ui.safety import inert
from eagle_tui.ui.sinks import checked, set_border_title

SEVERITY_STYLE = {"critical": "$error", "warning": "$warning", "info": "$primary"}
SEVERITY_ICON = {"critical": "✗", "warning": "⚠", "info": "ℹ"}


class AlertOrder:
    """First-seen order of alert kinds; pure bookkeeping, tested without an app."""

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}
        self._counter = 0

    def update(self, alerts: Sequence[Alert]) -> list[Alert]:
        """Record new kinds, forget cleared ones, return ``alerts`` oldest (root cause) first.

        Alerts first seen in the same update keep the order they came in (most severe first).
        """
        kinds = {a.kind for a in alerts}
        for kind in list(self._seen):
            if kind not in kinds:
                del self._seen[kind]
        self._counter += 1
        for a in alerts:
            self._seen.setdefault(a.kind, self._counter)
        # stable: alerts that appeared in the same update keep the rules' severity order
        return sorted(alerts, key=lambda a: self._seen[a.kind])


def alerts_content(alerts: Sequence[Alert], fix: bool = False) -> Content:
    """One line per alert; ``fix``: the alerts with a remedy say that ``F`` applies it."""
    if not alerts:
        return Content.styled("no alerts", "$text-muted")
    lines = []
    for a in alerts:
        style = SEVERITY_STYLE.get(a.severity, "$text")
        lines.append(Content.assemble(
            (f"{SEVERITY_ICON.get(a.severity, '·')} {a.severity.upper():<8} ", f"{style} bold"),
            (inert(a.message), style if a.severity == "critical" else "$text"),
            ("  F fix" if fix and a.remedy is not None else "", "$accent bold"),
        ))
    return Content("\n").join(lines)


class AlertsPane(RecordView):
    state_alerts: var[tuple[Alert, ...]] = record(tuple)

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.border_title = "Alerts"
        self.order = AlertOrder()
        self.alerts: list[Alert] = []
        self.fix_offered = False  # the app's ``F`` has a fix to apply (``ui/fix.py``)

    def repaint(self) -> None:
        alerts = self.state_alerts
        self.alerts = self.order.update(alerts)
        crit = sum(a.severity == "critical" for a in alerts)
        set_border_title(self, inert(f"Alerts ({len(alerts)})" if alerts else "Alerts"))
        self.set_class(crit > 0, "-critical")
        self.refresh(layout=True)

    def render(self) -> Content:
        return checked(alerts_content(self.alerts, self.fix_offered))


__all__ = ["AlertOrder", "AlertsPane", "alerts_content"]
