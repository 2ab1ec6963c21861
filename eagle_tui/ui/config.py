"""User configuration of the dashboard: theme, log buffer size, highlight rules, output folder.

Read from ``config.toml`` in the platform's config directory (``platformdirs``), or the file named
by ``$EAGLE_TUI_CONFIG`` / ``--config``. Every value remembers where it came from
(``UiConfig.origin``), so "why is my theme light?" has an answer. Unknown keys and bad values are
errors with the file and key in the message: a typo in a config file should be noticed, not
silently ignored. Widgets never read this module's globals; the composition root hands each one
the values it needs. An example file is in the notes.

More in docs/architecture.md, "Module notes", ``ui/config``.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs
from rich.errors import StyleSyntaxError
from rich.style import Style

from eagle_tui import errors
from eagle_tui.files import NotRegularFileError, read_text
from eagle_tui.model.boundary.loaders import TOML_MAX_BYTES, LoadError, load_toml
from eagle_tui.model.buffers.limits import DEFAULT_MAX_LINES, MAX_MAX_LINES, MIN_MAX_LINES
from eagle_tui.ui.highlight import HighlightRule
from eagle_tui.ui.theme import DEFAULT_THEME

APP_NAME = "eagle-tui"
ENV_CONFIG = "EAGLE_TUI_CONFIG"
_UI_KEYS = {"theme", "max_lines", "output_dir", "notify_critical"}
_RULE_KEYS = {"pattern", "style"}


class ConfigError(errors.ConfigError):
    """The config file is unreadable or has a bad value; ``str()`` is shown to the user."""


@dataclass(frozen=True, slots=True)
class UiConfig:
    theme: str = DEFAULT_THEME
    max_lines: int = DEFAULT_MAX_LINES
    highlight_rules: tuple[HighlightRule, ...] = ()
    output_dir: Path = field(default_factory=Path)
    notify_critical: bool = True
    theme_dir: Path | None = None  # user themes (<config dir>/themes)
    origin: tuple[tuple[str, str], ...] = ()  # (key, where the value came from)

    def source_of(self, key: str) -> str:
        return dict(self.origin).get(key, "default")

    def replace(self, origin: str = "command line", **changes: Any) -> UiConfig:
        """A copy with ``changes`` applied, recording ``origin`` for each changed key."""
        merged = dict(self.origin)
        merged.update({k: origin for k in changes})
        return dataclasses.replace(self, **changes, origin=tuple(sorted(merged.items())))


def default_config_path() -> Path:
    env = os.environ.get(ENV_CONFIG)
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_config_dir(APP_NAME)) / "config.toml"


def validate_max_lines(value: object, where: str = "max_lines") -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ConfigError(f"{where} must be an integer, got {value!r}")
    if not MIN_MAX_LINES <= value <= MAX_MAX_LINES:
        raise ConfigError(
            f"{where} must be between {MIN_MAX_LINES:,} and {MAX_MAX_LINES:,}, got {value:,}"
        )
    return value


def _rule(item: object, where: str) -> HighlightRule:
    if not isinstance(item, dict):
        raise ConfigError(f"{where}: each [[highlight]] entry must be a table")
    unknown = set(item) - _RULE_KEYS
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    pattern, style = item.get("pattern"), item.get("style")
    if not isinstance(pattern, str) or not isinstance(style, str):
        raise ConfigError(f"{where}: 'pattern' and 'style' must both be strings")
    try:
        Style.parse(style)
    except StyleSyntaxError as exc:
        raise ConfigError(f"{where}: style {style!r} is not a valid Rich style: {exc}") from exc
    try:
        return HighlightRule.compile(pattern, style)
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from exc


def config_from_mapping(data: dict[str, Any], origin: str, base: Path | None = None) -> UiConfig:
    """Validate parsed TOML into a :class:`UiConfig` (``origin`` names the file in errors)."""
    unknown = set(data) - {"ui", "highlight"}
    if unknown:
        raise ConfigError(f"{origin}: unknown section(s) {', '.join(sorted(unknown))}")
    ui = data.get("ui", {})
    if not isinstance(ui, dict):
        raise ConfigError(f"{origin}: [ui] must be a table")
    bad = set(ui) - _UI_KEYS
    if bad:
        raise ConfigError(f"{origin}: unknown key(s) in [ui]: {', '.join(sorted(bad))}")
    cfg = UiConfig(theme_dir=base / "themes" if base else None)
    changes: dict[str, Any] = {}
    if "theme" in ui:
        if not isinstance(ui["theme"], str) or not ui["theme"]:
            raise ConfigError(f"{origin}: [ui] theme must be a non-empty string")
        changes["theme"] = ui["theme"]
    if "max_lines" in ui:
        changes["max_lines"] = validate_max_lines(ui["max_lines"], f"{origin}: [ui] max_lines")
    if "output_dir" in ui:
        if not isinstance(ui["output_dir"], str):
            raise ConfigError(f"{origin}: [ui] output_dir must be a string")
        changes["output_dir"] = Path(ui["output_dir"]).expanduser()
    if "notify_critical" in ui:
        if not isinstance(ui["notify_critical"], bool):
            raise ConfigError(f"{origin}: [ui] notify_critical must be true or false")
        changes["notify_critical"] = ui["notify_critical"]
    rules = data.get("highlight", [])
    if not isinstance(rules, list):
        raise ConfigError(f"{origin}: highlight must be an array of tables ([[highlight]])")
    if rules:
        changes["highlight_rules"] = tuple(
            _rule(item, f"{origin}: highlight rule {i + 1}") for i, item in enumerate(rules)
        )
    return cfg.replace(origin=origin, **changes) if changes else cfg


def load_config(path: Path | None = None) -> UiConfig:
    """Load the config file; a missing *default* file means defaults, a missing named one fails."""
    explicit = path is not None or bool(os.environ.get(ENV_CONFIG))
    target = path if path is not None else default_config_path()
    base = target.parent
    try:
        text = read_text(target, limit=TOML_MAX_BYTES)
    except FileNotFoundError as exc:
        if explicit:
            raise ConfigError(f"config file {target} does not exist") from exc
        return UiConfig(theme_dir=base / "themes")
    except NotRegularFileError as exc:
        raise ConfigError(f"cannot read config file {exc}") from None
    except (OSError, UnicodeDecodeError, errors.InputError) as exc:
        raise ConfigError(f"cannot read config file {target}: {exc}") from exc
    try:
        data = load_toml(text, str(target))
    except LoadError as exc:
        raise ConfigError(str(exc)) from exc
    return config_from_mapping(data, str(target), base)


__all__ = [
    "DEFAULT_MAX_LINES",
    "ConfigError",
    "UiConfig",
    "config_from_mapping",
    "default_config_path",
    "load_config",
    "validate_max_lines",
]
