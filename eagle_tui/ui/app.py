"""The Textual app: holds the state, runs the session in a worker, lays out the five panes.

Attributes down, messages up: each batch of the session reaches the app as one
:class:`~eagle_tui.ui.inbox.SessionBatch` message, posted thread-safely from the session's
thread and merged with the next while pending (``ui/inbox.py``); the app's
:class:`~eagle_tui.ui.dashboard.DashboardModel` routes the batch's events (the log's lines to the
log view in one call), the app sets its ``state`` reactive, and ``watch_state`` publishes the
state's records to the app's record reactives, to which each pane is bound (``ui/binding.py``):
a pane repaints when a record it renders was replaced. Panes never read the session or global
settings; they post messages (``RootCause.Jump``) for user intents.

The app only renders and routes keys; everything it shows is a function of the state and of the
events the session delivered, so scripted sessions make it fully deterministic for snapshots.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from typing import cast

from textual.app import ComposeResult
from textual.containers import Container, Horizontal
from textual.css.query import NoMatches
from textual.driver import Driver
from textual.events import Resize
from textual.screen import Screen
from textual.theme import Theme
from textual.widget import Widget
from textual.widgets import Tab, Tabs
from textual.worker import Worker, WorkerState

from eagle_tui.model.boundary.termtext import Inert
from eagle_tui.model.buffers.gpuhistory import memory_moved
from eagle_tui.model.events import Event, Phase
from eagle_tui.model.fold.prefix import summary_text
from eagle_tui.model.state import DashboardState
from eagle_tui.ui.actions import KeyActions, SessionLike
from eagle_tui.ui.binding import RecordSource, bind, publish
from eagle_tui.ui.config import UiConfig
from eagle_tui.ui.control import RunControl
from eagle_tui.ui.dashboard import DashboardModel
from eagle_tui.ui.deadline import Deadline
from eagle_tui.ui.format import truncate
from eagle_tui.ui.frames import FRAME_INTERVAL, PANE_INTERVAL, pane_delay
from eagle_tui.ui.inbox import HOLD_LIMIT, BatchInbox, HeldGrown, SessionBatch
from eagle_tui.ui.keys import bindings
from eagle_tui.ui.safety import inert
from eagle_tui.ui.screens.help import HelpScreen
from eagle_tui.ui.sinks import notify, set_border_subtitle
from eagle_tui.ui.textual_private import use_row_compositor
from eagle_tui.ui.theme import load_stylesheet, variable_defaults
from eagle_tui.ui.widgets.alerts import AlertsPane
from eagle_tui.ui.widgets.footer import KeyFooter
from eagle_tui.ui.widgets.gpus import GpuPane
from eagle_tui.ui.widgets.logfile import FileLines
from eagle_tui.ui.widgets.logpane import LogPane
from eagle_tui.ui.widgets.logview import LogView
from eagle_tui.ui.widgets.metrics import MetricsPane
from eagle_tui.ui.widgets.startup import StartupPane
from eagle_tui.ui.widgets.status import StatusLine

PANES = ("startup", "log", "gpus", "metrics", "alerts")
TOP_PANES = ("startup", "metrics", "gpus")
PANE_TITLES = {"startup": "Startup", "log": "Log", "gpus": "GPUs", "metrics": "Metrics",
               "alerts": "Alerts"}
TOAST_CHARS = 160  # the full text is in the alerts pane; a toast must not hide the screen
COMPACT_MAX_WIDTH = 120  # below this width, or
COMPACT_MAX_HEIGHT = 32  # below this height: one pane at a time behind tabs


class MainScreen(Screen[None]):
    """The dashboard's screen: focus starts on the log view.

    Textual focuses the first focusable widget (the tab bar) when the screen is composed; the
    log view then took the focus in ``on_mount``, and each move restyles both widgets and their
    ancestors before the first frame.
    """

    AUTO_FOCUS = "#log"


class EagleApp(KeyActions, RecordSource):
    CSS = load_stylesheet()
    TITLE = "eagle-tui"
    BINDINGS = bindings()  # type: ignore[assignment]

    def __init__(
        self,
        config: UiConfig,
        session: SessionLike,
        *,
        themes: Sequence[Theme] = (),
        source_label: str = "",
        clock: Callable[[], float] = time.time,
        control: RunControl | None = None,
        file_lines: FileLines | None = None,
    ) -> None:
        # NO_COLOR (https://no-color.org): no colour at all. Textual alone turns colours into
        # 256-colour greys (its Monochrome filter); with native ANSI colours it drops them
        # (its NoColor filter: default foreground and background, attributes kept).
        super().__init__(ansi_color=True if "NO_COLOR" in os.environ else None)
        self.file_lines = file_lines  # the line store behind the log's file part (scrollback)
        self.config = config
        self.session = session
        self.control = control
        self._session_worker: Worker[DashboardState] | None = None
        self.clock = clock
        self.source_label = source_label
        self.theme_cycle = [t.name for t in themes]
        for theme in themes:
            self.register_theme(theme)
        self.theme = config.theme
        self._active_pane = "startup"  # the pane the compact layout shows (``_activate``)
        self.session_error: str | None = None
        self.session_done = False
        # the log buffer, GPU history and bench windows: beside the reduced state, which would
        # copy them on every batch
        self.model = DashboardModel(config.max_lines)
        self._log_hosts = 0  # hosts in the log: ``h`` (and its footer entry) needs two
        self._notified: set[str] = set()
        self._log_subtitle = ""  # the log pane's subtitle as last set (set only on a change)
        self._crash_shown = False
        self._shown_phase: Phase | None = None
        self._last_panes = 0.0
        self._panes = Deadline(self)  # the pending pane update
        self._unsubscribe: Callable[[], None] | None = None
        self._inbox = BatchInbox(self)
        self._held: SessionBatch | None = None  # a batch waiting for the log's next repaint
        self._log_widget: LogView | None = None  # (its last repaint sets the panes' frame grid)

    # ------------------------------------------------------------------ composition
    def get_driver_class(self) -> type[Driver]:
        """Textual's Linux driver with a short Esc wait (``ui/driver.py``)."""
        driver_class = super().get_driver_class()
        if driver_class.__name__ == "LinuxDriver":  # (not Windows, not a TEXTUAL_DRIVER)
            from eagle_tui.ui.driver import EscapeDriver  # termios: only where Linux's works

            if driver_class in EscapeDriver.__mro__:
                return EscapeDriver
        return driver_class

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return variable_defaults()

    def get_default_screen(self) -> Screen[None]:
        return use_row_compositor(MainScreen(id="_default"))  # repaints render only their rows

    def refresh_css(self, animate: bool = True) -> None:
        """Textual's, except before any screen exists: then only the theme's variables.

        Setting the theme in ``__init__`` queues a ``refresh_css``, which runs before the first
        screen is styled: it parsed every stylesheet source once in a throwaway stylesheet, and
        the first styling parsed them all again (the variables had cleared the cache). With
        nothing styled yet, the variables alone are all the refresh has to carry: one full
        CSS parse less before the first frame.
        """
        from eagle_tui.ui.textual_private import defer_css_refresh  # relies on Textual's order

        if not defer_css_refresh(self):
            super().refresh_css(animate)

    def compose(self) -> ComposeResult:
        yield bind(StatusLine(self.source_label, id="status"), EagleApp)
        yield Tabs(*(Tab(inert(PANE_TITLES[p]), id=f"tab-{p}") for p in PANES), id="tabs")
        with Container(id="panes"):
            with Horizontal(id="top"):
                yield bind(StartupPane(id="startup", classes="pane"), EagleApp)
                yield bind(MetricsPane(id="metrics", classes="pane"), EagleApp)
                yield bind(GpuPane(history=self.model.gpu_history, id="gpus", classes="pane"),
                           EagleApp)
            yield LogPane(self.config.max_lines, self.config.highlight_rules,
                          buffer=self.model.log_buffer, id="log-pane", classes="pane")
            yield bind(AlertsPane(id="alerts", classes="pane"), EagleApp)
        yield KeyFooter()

    def on_mount(self) -> None:
        self._relayout(self.size.width, self.size.height)
        log = self._log_widget = self.query_one(LogView)
        log.focus()
        log.file_lines = self.file_lines
        log.before_paint = self._take_held
        self._unsubscribe = self.session.subscribe(self._inbox)
        self.screen.screen_layout_refresh_signal.subscribe(self, self._keep_log_following)
        self.state = self.session.state
        # start now, while the first frame is painted: a big log is opened at its end (a
        # bounded read, its summary in a child process), so the session's first work is small
        # and the last screenful follows the first frame closely
        self._start_session()

    def _start_session(self) -> None:
        self._session_worker = self.run_worker(self.session.run(), name="session",
                                               exit_on_error=False)

    def show_run(self, session: object, label: str) -> None:
        """Show a relaunched run instead of the current one (``ui/control.py``): its own
        session, so phases, pid, ready time, series and alerts start fresh; the log view
        keeps the old run's lines above a separator, and the old session is stopped."""
        new = cast(SessionLike, session)
        old, self.session = self.session, new
        if self._unsubscribe is not None:
            self._unsubscribe()
        old.stop()
        self._inbox = BatchInbox(self)  # a batch the old one still has pending is dropped
        self.source_label = label
        self.session_done = False
        self.session_error = None
        self._notified.clear()
        self._crash_shown = False
        self._shown_phase = None
        self.log_view.add_separator(f"──── new run: {inert(label)} ────")
        status = self.query_one(StatusLine)
        status.source = label
        self._unsubscribe = new.subscribe(self._inbox)
        self.state = new.state
        self._update_panes()
        self._start_session()

    def on_unmount(self) -> None:
        self.session.stop()
        if self._unsubscribe is not None:
            self._unsubscribe()

    # ------------------------------------------------------------------ data flow
    def on_session_batch(self, message: SessionBatch) -> None:
        if message.origin is not None and message.origin is not self._inbox:
            return  # the run that was replaced
        if not self._hold(message):
            self._on_batch(*self._inbox.take(message))

    def on_held_grown(self, message: HeldGrown) -> None:
        if message.batch is self._held:  # a flood: taken in pieces, not all at the repaint
            self._take_held()

    def _hold(self, message: SessionBatch) -> bool:
        """Keep a batch with new lines for the log's next repaint, due anyway on the frame grid:
        while lines stream the session delivers a batch every few tens of ms, each a scroll and
        a state update that no frame showed. A held batch stays open in the inbox, which folds
        the next ones into it, until the repaint takes it (``_take_held``). A crash, a new
        phase, a GPU memory step, the user's marker or a flood's big batch is not held."""
        state, shown = message.state, self.state
        if (len(message.events) >= HOLD_LIMIT or state.startup.phase is not self._shown_phase
                or (state.startup.crash is not None and not self._crash_shown)
                or state.log.markers is not shown.log.markers
                or memory_moved(self.state_gpu.sample, state.gpu.sample)):
            return False
        try:
            log = self.log_view
        except NoMatches:  # the app is closing
            return False
        # (a batch without new lines, a tick, must not start a repaint of an unchanged log)
        if not log.paint_pending and (state.log.lines == shown.log.lines or not log.paint_soon()):
            return False
        self._held = message
        message.held = True
        return True

    def _take_held(self) -> None:
        message, self._held = self._held, None
        if message is not None and message.origin is self._inbox:  # (not a replaced run's)
            self._on_batch(*self._inbox.take(message))
        if self._panes.pending and self._panes.due - time.monotonic() < FRAME_INTERVAL / 4:
            self._update_panes()  # due on this grid point: in this screen update, not the next

    def _on_batch(self, state: DashboardState, events: Sequence[Event]) -> None:
        try:
            log = self.query_one(LogView)
        except NoMatches:  # the app is closing: a batch still in flight, nothing to show it on
            return
        self.model.route(events, log)
        if len(log.hosts) != self._log_hosts:
            self._log_hosts = len(log.hosts)
            self.refresh_bindings()
        self.state = state
        if self.model.gpu_step(self.state_gpu.sample, state):
            # a memory step is shown now, not at the next pane update (up to PANE_INTERVAL
            # later): only the GPU record is published, so only the GPU pane repaints
            self.model.feed_gpus(state)
            publish(self, state, ("gpu",))

    def watch_state(self, state: DashboardState) -> None:
        """Give the panes the new state: at once for a crash or a new phase, else at most
        every ``PANE_INTERVAL`` (a busy server changes tok/s on every batch, and redrawing
        the metrics 20 times a second costs CPU without telling the user more)."""
        urgent = (state.startup.crash is not None and not self._crash_shown) or (
            state.startup.phase is not self._shown_phase)
        if urgent:
            self._update_panes()
        elif not self._panes.pending:  # (a pending timer may be late: it stays the one update)
            now, log = time.monotonic(), self._log_widget
            wait = pane_delay(now, self._last_panes, log.last_paint if log is not None else 0.0,
                              log is not None and now < log.flood_until)
            if wait <= 0:
                self._update_panes()
            else:  # on the frame grid: shares a screen update with the log's repaint
                self._panes.start(wait, self._update_panes)
        if self.config.notify_critical:
            for alert in state.alerts:
                # (not the crash: its banner is on screen, and a toast over it on a small
                # terminal hid the fix and its F key)
                if (alert.severity == "critical" and alert.kind not in self._notified
                        and alert.kind != "crash"):
                    self._notified.add(alert.kind)
                    notify(self, inert(truncate(inert(alert.message), TOAST_CHARS)),
                           title=inert(alert.kind), severity="error", timeout=10)

    def _update_panes(self) -> None:
        self._panes.stop()
        try:
            self.query_one(StatusLine)
        except NoMatches:  # the app is closing: a late batch or timer, nothing to draw on
            return
        self._last_panes = time.monotonic()
        state = self.state
        self._shown_phase = state.startup.phase
        self.model.feed_gpus(state)
        publish(self, state)  # each pane bound to a replaced record repaints
        self.sync_fix(state.alerts)
        self._show_summary(state)
        if state.startup.crash is not None and not self._crash_shown:
            self._crash_shown = True
            if self.screen.has_class("-compact"):
                self.action_show_pane("startup")

    def _show_summary(self, state: DashboardState) -> None:
        """The log pane says that the lines above its first are still being summarized (a big
        log opened at its end); its subtitle is set only when the words change."""
        text = summary_text(state)
        pane = self.query_one(LogPane)
        subtitle = inert(f"earlier lines: {text}" if text is not None else "")
        if subtitle != self._log_subtitle:
            self._log_subtitle = subtitle
            set_border_subtitle(pane, subtitle)

    def _keep_log_following(self, _screen: Screen[object]) -> None:
        """After every relayout (the screen's public layout signal): a following log stays at
        its end.

        The log view re-follows on its ``Resize``; but when a batch's scroll and the layout
        change it causes land in one frame, Textual's compositor can resize the view without
        sending it one (its scroll-only reflow records the new region first), and the view
        kept a stale scroll offset: "following", yet rows short of the end. Seen when all of a
        scripted run's lines arrived in one message, before the alerts pane had grown.
        """
        log = self.log_view
        if log.follow and log.scroll_y < log.max_scroll_y:
            log.action_scroll_end()

    @property
    def render_pending(self) -> bool:
        """Panes or the log have a deferred redraw scheduled (tests wait for it)."""
        return (self._panes.pending or self.log_view.paint_pending
                or self._held is not None)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.name != "session" or event.worker is not self._session_worker:
            return
        try:
            status = self.query_one(StatusLine)
        except NoMatches:  # the app is closing (its screen already taken down)
            return
        if event.state is WorkerState.ERROR:
            err = event.worker.error
            self.session_error = f"{type(err).__name__}: {err}" if err else "unknown error"
            status.source = f"{self.source_label} · session failed".strip(" ·")
            notify(self, inert(self.session_error), title=Inert("session stopped"),
                   severity="error", timeout=30)
        elif event.state is WorkerState.SUCCESS:
            self.session_done = True
            status.source = f"{self.source_label} · ended".strip(" ·")
        self._update_panes()  # the state the session ended with, now

    # ------------------------------------------------------------------ layout
    def on_resize(self, event: Resize) -> None:
        # runs before App._on_resize stores the new size: use the event's
        self._relayout(event.size.width, event.size.height)

    def _relayout(self, width: int, height: int) -> None:
        screen = self.screen
        compact = width < COMPACT_MAX_WIDTH or height < COMPACT_MAX_HEIGHT
        screen.set_class(compact, "-compact")
        if compact:
            self._activate(self._active_pane)

    def _activate(self, pane: str) -> None:
        """Make ``pane`` the one the compact layout shows (and the tab bar's choice).

        The ``-active`` classes only matter in the compact layout (themes/layout.tcss), so they
        are set only there (``_relayout`` sets them on entering it): each change restyles the
        pane's whole subtree, and the wide layout's first frame need not pay for it.
        """
        self._active_pane = pane
        if self.screen.has_class("-compact"):
            for name in PANES:
                self.query_one(f"#{self._pane_id(name)}").set_class(name == pane, "-active")
            self.query_one("#top").set_class(pane in TOP_PANES, "-active")
        tabs = self.query_one(Tabs)
        if tabs.active != f"tab-{pane}":
            tabs.active = f"tab-{pane}"

    @staticmethod
    def _pane_id(name: str) -> str:
        return "log-pane" if name == "log" else name

    def on_tabs_tab_activated(self, event: Tabs.TabActivated) -> None:
        # a stale event (the tab bar's own activation at mount) must not undo a later choice
        if event.tab.id and event.tab.id == event.tabs.active:
            self._activate(event.tab.id.removeprefix("tab-"))

    # ------------------------------------------------------------------ actions
    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_show_pane(self, pane: str) -> None:
        if pane not in PANES:
            return
        if self.screen.has_class("-compact"):
            self._activate(pane)
        focusable: dict[str, type[Widget]] = {"log": LogView, "gpus": GpuPane}
        target = focusable.get(pane)
        if target is not None:
            widget = self.query_one(target)
            if not widget.has_focus:  # focus() repaints the widget even when it has the focus
                widget.focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``h`` has nothing to switch (and leaves the footer) until the log has two hosts;
        K/R/E exist only for a run eagle-tui launched (a run control was given)."""
        if action == "cycle_host":
            return self._log_hosts > 1
        if action in ("kill_run", "restart_run", "edit_run"):
            return self.control is not None
        if action == "fix_run":
            return self.fix_offered
        return True



__all__ = ["PANES", "PANE_INTERVAL", "EagleApp", "SessionLike"]
