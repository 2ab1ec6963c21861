"""SSH connection states as the status line and the startup pane show them.

The transport publishes ``ConnectionState`` events (connecting, connected, reconnecting with the
attempt number and the last error, failed, closed); the reducer keeps the latest per host in
``state.connections``. This module turns one into a short coloured phrase such as
``gpu-box ⟳ reconnecting (attempt 3, last error: timed out)``, in one place so that both panes
word and colour a state the same way.

The error text comes from the network and the remote sshd, so it is flattened to one line and
run through :func:`inert`, and only ever placed in ``Content`` as plain text: an error reading
``[bold]x[/]`` is shown as those characters, never parsed as markup.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content
from textual.geometry import Size
from textual.widget import Widget

from eagle_tui.model.boundary.termtext import inert_lines
from eagle_tui.model.events import ConnectionState
from eagle_tui.ui.format import truncate
from eagle_tui.ui.safety import inert
from eagle_tui.ui.sinks import checked, set_tooltip

# state → (icon, style); an unknown state (a newer transport) renders muted, never raises
CONNECTION_STYLE: dict[str, tuple[str, str]] = {
    "connecting": ("◌", "$warning"),
    "connected": ("●", "$success"),
    "reconnecting": ("⟳", "$warning bold"),
    "failed": ("✗", "$error bold"),
    "closed": ("○", "$text-muted"),
}
STATUS_ERROR_CHARS = 40  # the status line is shared; the startup pane shows the whole error


def error_text(error: str) -> str:
    """One inert line: tracebacks and paramiko messages may span lines or carry escapes."""
    return " ".join(inert(" ".join(error.split())).split())  # again: a removed escape leaves gaps


def connection_content(c: ConnectionState, error_chars: int | None = None) -> Content:
    """``host ● state (attempt n, last error: ...)``; ``error_chars`` cuts a long error, 0 drops
    it (the status line at 80 columns keeps the state and the attempt)."""
    icon, style = CONNECTION_STYLE.get(c.state, ("?", "$text-muted"))
    details: list[str] = []
    if c.state == "reconnecting" and c.attempt:
        details.append(f"attempt {c.attempt}")
    if c.error and c.state != "connected" and error_chars != 0:
        err = error_text(c.error)
        if error_chars is not None:
            err = truncate(err, error_chars)
        details.append(f"{'last error' if c.state == 'reconnecting' else 'error'}: {err}")
    parts: list[str | tuple[str, str]] = [(inert(c.host), "bold"), " ",
                                          (f"{icon} {inert(c.state)}", style)]
    if details:
        parts.append((f" ({', '.join(details)})", "$text-muted"))
    return Content.assemble(*parts)


def connections_content(connections: Sequence[ConnectionState], width: int = 1000) -> Content:
    """The startup pane's lines: one per host in ``--ssh`` order, and under a host that is not
    connected its last error, cut to ``width`` (the widget's tooltip holds it in full)."""
    lines: list[Content] = []
    for c in connections:
        lines.append(fit(Content.assemble((" ssh ", "$text-muted"), connection_content(c, 0)),
                         width))
        if c.error and c.state != "connected":
            what = "last error" if c.state == "reconnecting" else "error"
            lines.append(Content.styled(truncate(f"     {what}: {error_text(c.error)}", width),
                                        "$text-muted"))
    return Content("\n").join(lines)


def fit(content: Content, width: int) -> Content:
    """``content`` cut to ``width`` cells with an ellipsis (one line, never wrapped)."""
    if content.cell_length <= width:
        return content
    return content[:max(0, width - 1)] + Content("…")


class ConnectionList(Widget):
    """Under the startup stepper; hidden for a local server, which has no connection."""

    DEFAULT_CSS = "ConnectionList { height: auto; }"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.display = False
        self.connections: tuple[ConnectionState, ...] = ()

    def show(self, connections: tuple[ConnectionState, ...]) -> None:
        if connections == self.connections:
            return
        height_changes = _height(connections) != _height(self.connections)
        self.connections = connections
        self.display = bool(connections)
        errors = [f"{c.host}: {error_text(c.error)}" for c in connections
                  if c.error and c.state != "connected"]
        set_tooltip(self, inert_lines("\n".join(errors)) if errors else None)
        self.refresh(layout=height_changes)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return _height(self.connections)

    def render(self) -> Content:
        return checked(connections_content(self.connections, self.content_region.width or 1000))


def _height(connections: Sequence[ConnectionState]) -> int:
    """Lines of :func:`connections_content`: each host, plus an error line when it is down."""
    return sum(1 + bool(c.error and c.state != "connected") for c in connections)


__all__ = ["CONNECTION_STYLE", "ConnectionList", "connection_content", "connections_content",
           "error_text", "fit"]
