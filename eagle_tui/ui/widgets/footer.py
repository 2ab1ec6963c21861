"""The key footer: one widget that draws the keys as one line of text, repainted in place.

Textual's ``Footer`` recomposes on every change of the screen's bindings: it removes and mounts
~20 ``FooterKey`` widgets, styles them and lays out the whole screen (one or two layout
passes per rebuild). The bindings change whenever the focus moves or the log's filter box opens or
closes (its text keys stop being shortcuts). A rebuild is a whole layout pass, slow under a
flooding log, and it delayed the keys that came after it (docs/performance.md has the figures).
Deferring the rebuild (the previous fix) only moved it onto the
next key.

More in docs/architecture.md, "Module notes", ``ui/widgets/footer``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual import events
from textual.screen import Screen
from textual.widget import Widget

from eagle_tui.ui.sinks import checked_text


@dataclass(frozen=True, slots=True)
class FooterItem:
    """One key as the footer shows it."""

    key: str  # Textual's key name, pressed when the item is clicked
    display: str  # e.g. "f/End"
    description: str
    enabled: bool = True


Shown = tuple[tuple[FooterItem, ...], FooterItem | None]  # the keys, the palette key


class KeyFooter(Widget, can_focus=False):
    """The key footer (see the module doc): ``Footer``'s look, drawn by one widget."""

    ALLOW_SELECT = False
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "footer-key--key",
        "footer-key--description",
        "footer-key--bar",
        "footer-key--hover",
    }
    DEFAULT_CSS = """
    KeyFooter {
        dock: bottom;
        height: 1;
        color: $footer-foreground;
        background: $footer-background;
        .footer-key--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
        }
        .footer-key--description {
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
        .footer-key--bar {
            color: $foreground 20%;
        }
        .footer-key--hover {
            background: $block-hover-background;
        }
    }
    """

    def __init__(self, *, show_command_palette: bool = True, id: str | None = None) -> None:
        super().__init__(id=id)
        self.show_command_palette = show_command_palette
        self._shown: Shown | None = None  # None until the screen first reports its bindings
        self._spans: list[tuple[int, int, FooterItem]] = []  # cells of each drawn item
        self._hover: FooterItem | None = None

    # ------------------------------------------------------------------ the keys
    def shown_keys(self, screen: Screen[object]) -> Shown:
        """What ``Footer.compose`` shows: the first shown binding of each action, in order,
        and the command palette's key."""
        app = self.app
        palette = app.COMMAND_PALETTE_BINDING if (
            self.show_command_palette and app.ENABLE_COMMAND_PALETTE) else None
        items: dict[str, FooterItem] = {}
        palette_item: FooterItem | None = None
        for key, (_, binding, enabled, _tooltip) in screen.active_bindings.items():
            item = FooterItem(binding.key, app.get_key_display(binding), binding.description,
                              enabled)
            if binding.show:
                items.setdefault(binding.action, item)
            if key == palette:
                palette_item = item
        return tuple(items.values()), palette_item

    @property
    def items(self) -> tuple[FooterItem, ...]:
        """The keys drawn now, left to right (without the palette key)."""
        return self._shown[0] if self._shown is not None else ()

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self.bindings_changed)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def bindings_changed(self, screen: Screen[object]) -> None:
        """Textual's signal (after focus moves, ``refresh_bindings``...): repaint if the keys
        differ. As ``Footer`` does, nothing changes while the terminal has lost the focus."""
        if not screen.app.app_focus or not self.is_attached or screen is not self.screen:
            return
        shown = self.shown_keys(screen)
        if shown != self._shown:
            self._shown = shown
            self.refresh()

    # ------------------------------------------------------------------ drawing
    def render(self) -> Text:
        if self._shown is None:
            return Text()
        keys, palette = self._shown
        key_style = self.get_component_rich_style("footer-key--key")
        description_style = self.get_component_rich_style("footer-key--description")
        hover = self.get_component_rich_style("footer-key--hover", partial=True)
        spans: list[tuple[int, int, FooterItem]] = []

        def item_text(item: FooterItem, key_pad: str, description_pad: tuple[str, str]) -> Text:
            if item.description:
                text = Text.assemble(
                    (f"{key_pad}{item.display}{key_pad}", key_style),
                    (f"{description_pad[0]}{item.description}{description_pad[1]}",
                     description_style))
            else:
                text = Text(item.display, key_style)
            if not item.enabled:
                text.stylize(Style(dim=True))
            if item == self._hover:
                text.stylize(hover)
            return text

        right = Text(no_wrap=True, end="")
        if palette is not None:  # docked right: "▏^p palette "
            right.append("▏", self.get_component_rich_style("footer-key--bar"))
            right.append_text(item_text(palette, "", (" ", "")))
            right.append(" ")
        width = self.size.width
        room = max(0, width - right.cell_len)
        left = Text(no_wrap=True, end="")
        for item in keys:  # whole keys only: the ones that do not fit are left to ? and ^p
            text = item_text(item, " ", ("", " "))
            start = left.cell_len
            if start + text.cell_len > room:
                break
            left.append_text(text)
            spans.append((start, left.cell_len, item))
        left.truncate(room, overflow="crop", pad=True)
        self._spans = [(a, min(b, room), item) for a, b, item in spans if a < room]
        if palette is not None:
            self._spans.append((room + 1, width, palette))
        line = left + right
        line.stylize_before(Style(bgcolor=self.rich_style.bgcolor))  # gaps: as Footer's
        return checked_text(line)

    def item_at(self, x: int) -> FooterItem | None:
        """The item drawn at cell ``x`` (None: none)."""
        for start, end, item in self._spans:
            if start <= x < end:
                return item
        return None

    # ------------------------------------------------------------------ mouse
    def on_mouse_down(self, event: events.MouseDown) -> None:
        item = self.item_at(event.x)
        if item is None:
            return
        if item.enabled:
            self.app.simulate_key(item.key)
        else:
            self.app.bell()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        self._set_hover(self.item_at(event.x))

    def on_leave(self, event: events.Leave) -> None:
        self._set_hover(None)

    def _set_hover(self, item: FooterItem | None) -> None:
        if item != self._hover:
            self._hover = item
            self.refresh()


__all__ = ["FooterItem", "KeyFooter"]
