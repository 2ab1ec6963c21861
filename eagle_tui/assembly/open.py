"""The one way to open a dashboard: :func:`open_dashboard` (or :func:`prepare_dashboard`).

``watch``, ``replay``, ``demo``, ``launch`` and ``attach`` describe what to watch as a
:class:`~eagle_tui.assembly.spec.DashboardSpec` and call :func:`open_dashboard`, which either
opens the dashboard (the session on its own thread,
:class:`~eagle_tui.assembly.threaded.ThreadedSession`, its batches reaching the app as Textual
messages) or, without a terminal (or with ``--headless``/``--json``/``--duration``), runs the
headless presenter (:mod:`eagle_tui.headless`) over the very same threaded session.

Everything that can fail with a plain message (a bad config file, an unknown theme, an
unreachable SSH host) is checked *before* Textual takes the terminal, so the error prints
normally and the exit code is 2. The snapshot and Pilot tests build their app with
:func:`prepare_dashboard` over a scripted session: the same thread, the same message path.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TextIO

from eagle_tui.assembly.opener import spec_opener
from eagle_tui.assembly.spec import DashboardSpec
from eagle_tui.assembly.threaded import Opener, Subscriber, ThreadedSession
from eagle_tui.console import fail
from eagle_tui.errors import EagleError

if TYPE_CHECKING:  # the UI is imported only when a dashboard opens: headless never loads Textual
    from eagle_tui.assembly.control import LaunchControl
    from eagle_tui.headless.progress import Watched
    from eagle_tui.model.state import DashboardState
    from eagle_tui.ui.app import EagleApp
    from eagle_tui.ui.config import UiConfig

EXIT_USAGE = 2
# A headless presenter: given the session, the task running it and where to print, it returns
# the exit code once it has its answer (the caller then stops the session and closes).
Presenter = Callable[["Watched", "asyncio.Task[DashboardState]", TextIO], Awaitable[int]]


def ui_config(spec: DashboardSpec) -> UiConfig:
    """The config file, then the spec's theme / max lines on top (raises ``ConfigError``)."""
    from eagle_tui.ui.config import load_config, validate_max_lines

    cfg = load_config(spec.config_path)
    changes: dict[str, Any] = {}
    if spec.theme:
        changes["theme"] = spec.theme
    if spec.max_lines is not None:
        changes["max_lines"] = validate_max_lines(spec.max_lines, "--max-lines")
    return cfg.replace(**changes) if changes else cfg


def wants_dashboard(spec: DashboardSpec) -> bool:
    """The dashboard needs a terminal on both ends; headless/json/duration ask for lines."""
    if spec.headless or spec.json or spec.duration is not None:
        return False
    return sys.stdin.isatty() and sys.stdout.isatty()


@dataclass(frozen=True)
class Dashboard:
    """An assembled dashboard, not running yet: the app and the session thread it shows
    (and the run control that may replace that session with a relaunched run's)."""

    app: EagleApp
    session: ThreadedSession
    control: LaunchControl | None = None

    def run(self) -> int:
        """Run the dashboard; afterwards stop the session threads and wait for them."""
        tune_gc()
        try:
            self.app.run()
        finally:
            self.close()
        return self.app.return_code or 0

    def close(self) -> None:
        """Stop the first session and every one a relaunch started (idempotent)."""
        self.session.stop()
        self.session.join()
        if self.control is not None:
            self.control.close()


def prepare_dashboard(
    spec: DashboardSpec,
    *,
    opener: Opener | None = None,
    config: UiConfig | None = None,
    subscribers: Sequence[Subscriber] = (),
    clock: Callable[[], float] = time.time,
    control: LaunchControl | None = None,
) -> Dashboard:
    """Start the session thread (connecting SSH hosts) and build the app; nothing is drawn yet.

    ``opener`` replaces the spec's own (tests: a scripted session); ``subscribers`` are called
    on the session thread after every batch (``demo`` starts its load there). ``control``: the
    run was launched by eagle-tui, and K/R/E may stop, restart and relaunch it (never given for
    a watched or attached run, nor with ``--read-only``). Raises ``ConfigError``,
    ``UsageError`` or ``TransportError`` with the session thread stopped.
    """
    from eagle_tui.sources.linestore import Scrollback
    from eagle_tui.ui.app_factory import build_app

    cfg = config if config is not None else ui_config(spec)
    hosts: list[str] = []
    watched = replace(spec, max_lines=cfg.max_lines, follow_restarts=True)
    # the log's file-backed scrollback: a live log file (not a replay, nor a scripted opener)
    scrollback = Scrollback() if opener is None and spec.log and spec.replay is None else None
    threaded = ThreadedSession(
        opener or spec_opener(watched, hosts, scrollback=scrollback, screen=True))
    for cb in subscribers:
        threaded.subscribe(cb)
    try:
        threaded.start()  # connects (SSH) before the terminal is taken over
        app = build_app(cfg, session=threaded,
                        source_label=spec.source_label(hosts[0] if hosts else ""), clock=clock,
                        control=control, file_lines=scrollback)
    except BaseException:
        threaded.stop()
        raise
    if control is not None:
        control.spec = watched
        control.attach(threaded)
    return Dashboard(app, threaded, control)


def open_dashboard(
    spec: DashboardSpec,
    *,
    presenter: Presenter | None = None,
    subscribers: Sequence[Subscriber] = (),
    opener: Opener | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
    control: LaunchControl | None = None,
) -> int:
    """Open the dashboard (a terminal) or the headless presenter for ``spec``; the exit code.

    ``presenter`` replaces the default headless one (progress lines until the run ends or
    ``spec.duration`` passes; ``demo`` waits for ready and prints live metrics); subscribers
    run on the session thread in both modes. ``opener`` replaces the spec's (tests);
    ``control`` gives the dashboard K/R/E (:func:`prepare_dashboard`). A refusal
    (a bad config, a bad spec, an SSH host key refused: see :func:`_refusals`) is printed as
    ``eagle-tui COMMAND: error: ...``, exit 2.
    """
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        if not wants_dashboard(spec):
            from eagle_tui.assembly.backstop import backstop

            with backstop(spec.duration, spec.command):  # --duration is kept, hang or not
                return asyncio.run(run_headless(spec, presenter, subscribers, out, err, opener))
        dashboard = prepare_dashboard(spec, opener=opener, subscribers=subscribers,
                                      control=control)
    except _refusals() as exc:  # (evaluated only when something was raised)
        fail(spec.command, exc, err)
        return EXIT_USAGE
    return dashboard.run()


def _refusals() -> tuple[type[Exception], ...]:
    """What :func:`open_dashboard` prints as a usage error (exit 2) instead of a traceback."""
    from eagle_tui.transport.base import TransportError
    from eagle_tui.ui.config import ConfigError

    return (EagleError, ConfigError, TransportError)


async def run_headless(spec: DashboardSpec, presenter: Presenter | None,
                       subscribers: Sequence[Subscriber], out: TextIO, err: TextIO,
                       opener: Opener | None = None) -> int:
    """The headless presenter over the spec's session, on the same session thread as the
    dashboard's; the presenter waits here, its subscribers print on the session thread."""
    from eagle_tui.headless.progress import follow

    if spec.replay is not None:  # the replay keeps as many lines as the dashboard would
        spec = replace(spec, max_lines=ui_config(spec).max_lines)
    hosts: list[str] = []
    threaded = ThreadedSession(opener or spec_opener(spec, hosts, err))
    for cb in subscribers:
        threaded.subscribe(cb)
    t0 = time.monotonic()
    await asyncio.to_thread(threaded.start)  # connects: an SSH refusal is raised here
    try:
        if presenter is None:
            has_url = spec.health_decides(hosts[0] if hosts else "")
            # --duration counts from the start: a slow first connection is part of it
            duration = (None if spec.duration is None
                        else max(0.0, spec.duration - (time.monotonic() - t0)))

            def presenter(s: Watched, r: asyncio.Task[DashboardState], o: TextIO
                          ) -> Awaitable[int]:
                return follow(s, r, o, as_json=spec.json, has_url=has_url,
                              duration=duration, crash_exit=spec.replay is not None)
        runner = asyncio.ensure_future(threaded.run())
        try:
            return await presenter(threaded, runner, out)
        finally:
            threaded.stop()
            await runner
    finally:
        threaded.stop()  # (started, never run: the thread still ends and closes)
        await asyncio.to_thread(threaded.join)


def tune_gc() -> None:
    """Fewer cyclic-GC passes while a busy log streams in.

    A flooding log makes tens of thousands of short-lived event objects a second; with the
    default gen-0 threshold the collector would run many times a second and re-scan the app's
    long-lived objects in gen 1/2. The events hold no cycles, so start-up's objects are frozen
    and gen 0 is collected far less often (the gain: docs/performance.md).
    """
    import gc

    gc.freeze()
    gc.set_threshold(50_000, 20, 20)


__all__ = ["Dashboard", "Presenter", "open_dashboard", "prepare_dashboard", "run_headless",
           "spec_opener", "tune_gc", "ui_config", "wants_dashboard"]
