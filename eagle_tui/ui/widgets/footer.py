"""The key footer: rebuilt only when the keys it shows change, and never in a key's frame.

Textual's ``Footer`` recomposes (~20 ``FooterKey`` widgets, their styles, a layout pass) on every
change of the screen's bindings, in the same refresh as the change. Moving the focus changes
them: opening the log's filter box (``/``) focuses an ``Input``, which hides the printable-key
bindings, and the rebuild was about half of that key's key→screen time (~150 of ~300 ms on a
loaded 2-core machine, measured with the rebuild switched off). Here the first composition is
immediate; later ones happen only if the shown keys differ, ``FOOTER_DELAY`` after the last
change (so a key's own effect reaches the screen first, and open/close in quick succession
rebuilds once, or not at all).
"""

from __future__ import annotations

from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer

FOOTER_DELAY = 0.25  # s after the last bindings change before the footer is rebuilt

Shown = tuple[tuple[str, str, str, str, bool, str], ...]


class KeyFooter(Footer):
    """A ``Footer`` whose rebuilds are skipped when nothing shown changes, and deferred."""

    _shown: Shown | None = None
    _pending: Timer | None = None

    def shown_keys(self, screen: Screen[object]) -> Shown:
        """What ``Footer.compose`` reads from the bindings, in its order."""
        palette = self.app.COMMAND_PALETTE_BINDING if self.show_command_palette else None
        return tuple(
            (binding.key, self.app.get_key_display(binding), binding.description,
             binding.action, enabled, tooltip)
            for key, (_, binding, enabled, tooltip) in screen.active_bindings.items()
            if binding.show or key == palette
        )

    @property
    def rebuild_pending(self) -> bool:
        return self._pending is not None

    def _composes(self, screen: Screen[object]) -> bool:
        """Whether ``Footer.bindings_changed`` will recompose now (else it records nothing)."""
        return screen.app.app_focus and self.is_attached and screen is self.screen

    def bindings_changed(self, screen: Screen[object]) -> None:
        if self._shown is None:  # the first composition: at once, as Textual does
            if self._composes(screen):
                self._shown = self.shown_keys(screen)
            super().bindings_changed(screen)
            return
        if self._pending is not None:
            self._pending.stop()
        self._pending = self.set_timer(FOOTER_DELAY, lambda: self._rebuild(screen))

    def _rebuild(self, screen: Screen[object]) -> None:
        self._pending = None
        shown = self.shown_keys(screen)
        if shown != self._shown:
            if self._composes(screen):
                self._shown = shown
            super().bindings_changed(screen)


__all__ = ["FOOTER_DELAY", "KeyFooter"]
