"""The UI half of the composition root: ``build_app(config, session=...)``.

:func:`eagle_tui.assembly.open.prepare_dashboard` (``watch``, ``replay``, ``demo`` and the
snapshot tests) builds every dashboard here, over its threaded session, so tests exercise the
real wiring (themes, stylesheet, config, session thread, batch messages) with scripted sources
instead of a parallel test-only assembly. Configuration problems (an unknown theme, an
unreadable user theme file) surface here as :class:`ConfigError` before the terminal is taken
over, where a plain error message can still be printed.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from textual.theme import BUILTIN_THEMES

from eagle_tui.ui.app import EagleApp, SessionLike
from eagle_tui.ui.config import ConfigError, UiConfig, load_config
from eagle_tui.ui.control import RunControl
from eagle_tui.ui.theme import ThemeError, builtin_themes, user_themes
from eagle_tui.ui.widgets.logfile import FileLines


def build_app(
    config: UiConfig | None = None,
    *,
    session: SessionLike,
    source_label: str = "",
    clock: Callable[[], float] = time.time,
    control: RunControl | None = None,
    file_lines: FileLines | None = None,
) -> EagleApp:
    """Assemble the dashboard for ``session`` (anything shaped like :class:`Session`).

    ``config=None`` reads the user's config file (:func:`load_config`); tests pass their own.

    ``source_label`` is shown in the status line (a host, a file name, "demo"); ``clock`` is used
    only for file names and marker labels, and is frozen by tests. ``control``: K/R/E for a
    run eagle-tui launched (``None``: the keys are off and not in the footer). ``file_lines``:
    the line store that lets the log scroll back into the file (``None``: the in-memory lines).
    """
    cfg = config if config is not None else load_config()
    try:
        themes = builtin_themes()
        if cfg.theme_dir is not None:
            themes += user_themes(cfg.theme_dir)
    except ThemeError as exc:
        raise ConfigError(str(exc)) from exc
    names = [t.name for t in themes]
    if cfg.theme not in names and cfg.theme not in BUILTIN_THEMES:
        raise ConfigError(
            f"unknown theme {cfg.theme!r} (from {cfg.source_of('theme')}); "
            f"available: {', '.join(names)} or a Textual theme such as textual-dark"
        )
    return EagleApp(cfg, session, themes=themes, source_label=source_label, clock=clock,
                    control=control, file_lines=file_lines)


__all__ = ["build_app"]
