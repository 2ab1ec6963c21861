"""Themes ship as data in eagle_tui.themes; no colour literal lives in the UI's Python code."""

from __future__ import annotations

import re
import tomllib
from importlib import resources
from pathlib import Path

import pytest

from eagle_tui.ui.app_factory import build_app
from eagle_tui.ui.config import ConfigError, UiConfig
from eagle_tui.ui.theme import (
    BUILTIN_THEME_NAMES,
    ThemeError,
    builtin_themes,
    load_stylesheet,
    theme_from_mapping,
    user_themes,
    variable_defaults,
)
from tests.support.ui_helpers import scripted_session

ROOT = Path(__file__).resolve().parents[2]
HEX = re.compile(r"#[0-9a-fA-F]{6}\b|#[0-9a-fA-F]{3}\b|\brgb\(")


def test_three_builtin_themes_load_in_cycle_order() -> None:
    assert [t.name for t in builtin_themes()] == list(BUILTIN_THEME_NAMES)
    assert [t.dark for t in builtin_themes()] == [True, False, True]


def test_every_custom_css_variable_has_a_default_and_each_theme_defines_it() -> None:
    css = load_stylesheet()
    used = set(re.findall(r"\$(log-[a-z-]+|bar-empty)", css))
    # the Python side uses $bar-empty in Content styles
    assert used <= set(variable_defaults())
    for theme in builtin_themes():
        assert set(variable_defaults()) <= set(theme.variables), theme.name


def test_no_hex_colours_in_ui_python() -> None:
    offenders = []
    for path in (ROOT / "eagle_tui" / "ui").rglob("*.py"):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if HEX.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert offenders == []


def test_theme_package_is_importable_data() -> None:
    names = {p.name for p in resources.files("eagle_tui.themes").iterdir()}
    assert {"eagle-dark.toml", "eagle-light.toml", "eagle-high-contrast.toml", "layout.tcss",
            "panes.tcss", "log.tcss", "defaults.toml"} <= names


def test_pyproject_lists_every_package_and_maps_themes() -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    st = data["tool"]["setuptools"]
    assert st["package-dir"]["eagle_tui.themes"] == "themes"
    found = {
        ".".join(p.parent.relative_to(ROOT).parts)
        for p in (ROOT / "eagle_tui").rglob("__init__.py")
    }
    missing = found - set(st["packages"])
    assert not missing, f"add to [tool.setuptools] packages in pyproject.toml: {sorted(missing)}"
    assert "eagle_tui.themes" in st["packages"]
    assert set(st["package-data"]["eagle_tui.themes"]) >= {"*.tcss", "*.toml"}


def test_bad_theme_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(ThemeError, match="unknown theme key 'colour'"):
        theme_from_mapping({"name": "x", "primary": "red", "colour": "blue"}, "x.toml")
    with pytest.raises(ThemeError, match=r"needs at least"):
        theme_from_mapping({"name": "x"}, "x.toml")
    (tmp_path / "broken.toml").write_text("name = \n", encoding="utf-8")
    with pytest.raises(ThemeError, match=r"broken\.toml"):
        user_themes(tmp_path)


def test_user_theme_dir_and_unknown_theme(tmp_path: Path) -> None:
    (tmp_path / "themes").mkdir()
    (tmp_path / "themes" / "mine.toml").write_text(
        'name = "mine"\nprimary = "red"\ndark = true\n', encoding="utf-8")
    cfg = UiConfig(theme="mine", theme_dir=tmp_path / "themes")
    app = build_app(cfg, session=scripted_session([]))
    assert app.theme == "mine"
    assert app.theme_cycle[-1] == "mine"
    with pytest.raises(ConfigError, match="unknown theme 'nope'"):
        build_app(UiConfig(theme="nope"), session=scripted_session([]))
