"""Theme and stylesheet loading from the ``eagle_tui.themes`` data package.

Colours live in TOML files (one per theme) and ``.tcss`` stylesheets, never in Python: the
dashboard's look can be changed, or a high-contrast variant added, without touching code, and a
user can drop their own ``<name>.toml`` into ``<config dir>/themes/``.

A theme file holds the fields of :class:`textual.theme.Theme` at the top level and a
``[variables]`` table for eagle-tui's own CSS variables (``$log-debug`` ...). ``defaults.toml``
gives every such variable a fallback, so a Textual built-in theme chosen in the config still
parses the stylesheet.
"""

from __future__ import annotations

from dataclasses import fields
from importlib import resources
from pathlib import Path
from typing import Any

from textual.theme import Theme

from eagle_tui.errors import ConfigError
from eagle_tui.files import NotRegularFileError, read_text
from eagle_tui.model.boundary.loaders import LoadError, load_toml

THEME_PACKAGE = "eagle_tui.themes"
BUILTIN_THEME_NAMES = ("eagle-dark", "eagle-light", "eagle-high-contrast")
DEFAULT_THEME = "eagle-dark"
STYLESHEETS = ("layout.tcss", "panes.tcss", "log.tcss")

_THEME_FIELDS = {f.name: f.type for f in fields(Theme)}


class ThemeError(ConfigError):
    """A theme file is malformed; the message names the file and the offending key."""


def _package_text(name: str) -> str:
    return (resources.files(THEME_PACKAGE) / name).read_text(encoding="utf-8")


def load_stylesheet() -> str:
    """All of the app's ``.tcss`` concatenated, in a fixed order (later files refine earlier)."""
    return "\n".join(_package_text(name) for name in STYLESHEETS)


def theme_from_mapping(data: dict[str, Any], origin: str) -> Theme:
    """Build a :class:`Theme` from parsed TOML, rejecting unknown keys and wrong types."""
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        if key not in _THEME_FIELDS:
            raise ThemeError(f"{origin}: unknown theme key {key!r}")
        if key == "variables":
            if not isinstance(value, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in value.items()
            ):
                raise ThemeError(f"{origin}: [variables] must map names to colour strings")
        elif key in ("dark", "ansi"):
            if not isinstance(value, bool):
                raise ThemeError(f"{origin}: {key} must be true or false")
        elif key in ("luminosity_spread", "text_alpha"):
            if not isinstance(value, int | float) or isinstance(value, bool):
                raise ThemeError(f"{origin}: {key} must be a number")
            value = float(value)
        elif not isinstance(value, str):
            raise ThemeError(f"{origin}: {key} must be a string")
        kwargs[key] = value
    if "name" not in kwargs or "primary" not in kwargs:
        raise ThemeError(f"{origin}: a theme needs at least 'name' and 'primary'")
    return Theme(**kwargs)


def _parse_toml(text: str, origin: str) -> dict[str, Any]:
    try:
        return load_toml(text, origin)
    except LoadError as exc:
        raise ThemeError(str(exc)) from exc


def builtin_themes() -> list[Theme]:
    """The three shipped themes, in the order ``t`` cycles through them."""
    return [
        theme_from_mapping(_parse_toml(_package_text(f"{n}.toml"), f"{n}.toml"), f"{n}.toml")
        for n in BUILTIN_THEME_NAMES
    ]


def user_themes(directory: Path) -> list[Theme]:
    """Themes from ``*.toml`` files in ``directory`` (missing directory → none)."""
    if not directory.is_dir():
        return []
    themes = []
    for path in sorted(directory.glob("*.toml")):
        try:
            text = read_text(path)
        except NotRegularFileError as exc:
            raise ThemeError(str(exc)) from None
        except OSError as exc:
            raise ThemeError(f"{path}: cannot read: {exc.strerror or exc}") from exc
        themes.append(theme_from_mapping(_parse_toml(text, str(path)), str(path)))
    return themes


def variable_defaults() -> dict[str, str]:
    """Fallbacks for eagle-tui's CSS variables (see ``themes/defaults.toml``)."""
    data = _parse_toml(_package_text("defaults.toml"), "defaults.toml")
    variables = data.get("variables", {})
    return {str(k): str(v) for k, v in variables.items()}


__all__ = [
    "BUILTIN_THEME_NAMES",
    "DEFAULT_THEME",
    "ThemeError",
    "builtin_themes",
    "load_stylesheet",
    "theme_from_mapping",
    "user_themes",
    "variable_defaults",
]
