"""The dashboard's key actions on the log and the screen (find, jump, marker, save, screenshot,
theme, the command palette), apart from the app's layout and batch handling (:mod:`.app`)."""

from __future__ import annotations

import time
from abc import abstractmethod
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Protocol

from textual.app import SystemCommand
from textual.reactive import var
from textual.screen import Screen

from eagle_tui.model.boundary.termtext import Inert
from eagle_tui.model.events import Event, UserMarker
from eagle_tui.model.fold.prefix import line_text
from eagle_tui.model.state import DashboardState
from eagle_tui.ui.config import UiConfig
from eagle_tui.ui.fix import FixingApp
from eagle_tui.ui.keys import KEYS
from eagle_tui.ui.safety import inert
from eagle_tui.ui.sinks import notify
from eagle_tui.ui.widgets.logpane import LogPane
from eagle_tui.ui.widgets.logview import LogView
from eagle_tui.ui.widgets.startup import RootCause


class SessionLike(Protocol):
    """What the app needs from :class:`eagle_tui.session.Session` (tests may pass a fake).

    ``subscribe``'s callback may be called on another thread (the threaded session's): the
    app's is a :class:`~eagle_tui.ui.inbox.BatchInbox`, which only posts a message.
    """

    @property
    def state(self) -> DashboardState: ...

    def subscribe(
        self, callback: Callable[[DashboardState, Sequence[Event]], None]
    ) -> Callable[[], None]: ...

    def post(self, *events: Event) -> None: ...

    async def run(self) -> DashboardState: ...

    def stop(self) -> None: ...


class KeyActions(FixingApp):
    """The actions behind the keys that act on the log view and the screen; the app
    (:class:`~eagle_tui.ui.app.EagleApp`) lays the panes out and shows them."""

    state: var[DashboardState] = var(DashboardState(), always_update=True, init=False)
    config: UiConfig
    session: SessionLike
    clock: Callable[[], float]
    theme_cycle: list[str]

    @abstractmethod
    def action_show_pane(self, pane: str) -> None:
        """Show (and focus) one of the five panes."""

    @property
    def log_view(self) -> LogView:
        return self.query_one(LogView)

    def action_filter(self) -> None:
        self.action_show_pane("log")
        self.query_one(LogPane).open_find("filter")

    def action_search(self) -> None:
        self.action_show_pane("log")
        self.query_one(LogPane).open_find("search")

    def action_find(self, forward: bool) -> None:
        view = self.log_view
        if not (view.search_text or view.filter_text):
            notify(self, Inert("No search yet: press ctrl+f (search) or / (filter)."))
            return
        found, wrapped = view.find(forward)
        if not found:
            notify(self, Inert("No matching line in the buffer."), severity="warning")
        elif wrapped:
            notify(self, Inert("Search wrapped around."), timeout=2)

    def action_first_error(self) -> None:
        self.action_show_pane("log")
        if self.log_view.jump_to_first_error() is not None:
            return
        first = self.state.log.first_error_line
        if first is not None and self.log_view.jump_to_lineno(first):
            return  # pruned from memory, but in the log's file part (scrollback)
        if first is None:
            notify(self, Inert("No error lines so far."))
        else:
            where = line_text(first, self.state.log.lineno_base)
            notify(self, inert(f"The first error ({where}) is older than the "
                               f"{self.config.max_lines:,} lines kept."), severity="warning")

    def action_crash_line(self) -> None:
        crash = self.state.startup.crash
        if crash is None:
            notify(self, Inert("No crash detected."))
            return
        self._jump(crash.lineno)

    def on_root_cause_jump(self, message: RootCause.Jump) -> None:
        self._jump(message.lineno)

    def _jump(self, lineno: int) -> None:
        self.action_show_pane("log")
        if not self.log_view.jump_to_lineno(lineno):
            where = line_text(lineno, self.state.log.lineno_base).capitalize()
            notify(self, inert(f"{where} is no longer in the log buffer."), severity="warning")

    def action_cycle_host(self) -> None:
        self.action_show_pane("log")
        self.log_view.cycle_host()

    def action_follow(self) -> None:
        self.log_view.set_follow(True)

    def action_wrap(self) -> None:
        self.log_view.set_wrap(not self.log_view.wrap)

    def action_own_polls(self) -> None:
        fold = not self.log_view.fold_own
        self.log_view.set_fold_own(fold)
        notify(self, Inert("eagle-tui's own polls folded") if fold
               else Inert("eagle-tui's own polls shown"), timeout=2)

    def action_marker(self) -> None:
        now = self.clock()
        label = time.strftime("%H:%M:%S", time.localtime(now))
        number = self.log_view.add_marker(label)
        self.session.post(UserMarker(self.state.log.lines, now, f"marker {number}"))
        notify(self, inert(f"Marker {number} at {label}"), timeout=2)

    def _output_path(self, stem: str, suffix: str) -> Path:
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(self.clock()))
        directory = self.config.output_dir.expanduser()
        path = directory / f"{stem}-{stamp}{suffix}"
        n = 1
        while path.exists():
            n += 1
            path = directory / f"{stem}-{stamp}-{n}{suffix}"
        return path

    def action_save_log(self) -> None:
        path = self._output_path("eagle-tui-log", ".txt")
        try:
            count = self.log_view.save(path)
        except OSError as exc:
            notify(self, inert(f"Could not save the log to {path}: {exc.strerror or exc}"),
                   severity="error")
            return
        notify(self, inert(f"Saved {count:,} lines to {path}"), title=Inert("log saved"))

    def action_screenshot(self, filename: str | None = None, path: str | None = None) -> None:
        """Export an SVG of the screen; by default a new time-stamped file in ``output_dir``."""
        target = self._output_path("eagle-tui", ".svg")
        if filename:
            target = Path(path or target.parent) / filename
        try:
            saved = self.save_screenshot(target.name, str(target.parent))
        except OSError as exc:
            notify(self, inert(f"Could not write {target}: {exc.strerror or exc}"),
                   severity="error")
            return
        notify(self, inert(f"Screenshot saved to {saved}"), title=Inert("screenshot"))

    def action_cycle_theme(self) -> None:
        names = self.theme_cycle or [self.theme]
        nxt = names[(names.index(self.theme) + 1) % len(names)] if self.theme in names else names[0]
        self.theme = nxt
        notify(self, inert(f"Theme: {nxt}"), timeout=2)

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        for k in KEYS:
            title = f"{k.label} ({k.display})"
            yield SystemCommand(title, k.help, self._palette_callback(k.action, k.unavailable))
        for cmd in super().get_system_commands(screen):
            if cmd.title not in ("Quit", "Screenshot"):
                yield cmd

    def _palette_callback(self, action: str, unavailable: str = "") -> Callable[[], object]:
        async def run() -> None:
            if unavailable and self.check_action(action.split("(")[0], ()) is False:
                notify(self, inert(unavailable), severity="warning")
                return
            await self.run_action(action)

        return run


__all__ = ["KeyActions", "SessionLike"]
