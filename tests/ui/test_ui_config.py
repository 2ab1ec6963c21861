"""User config: defaults, a real file, and clear errors for bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from eagle_tui.ui.config import ConfigError, UiConfig, load_config


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_missing_default_file_means_defaults(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EAGLE_TUI_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    cfg = load_config()
    assert cfg.theme == "eagle-dark"
    assert cfg.max_lines == 10_000
    assert cfg.highlight_rules == ()
    assert cfg.source_of("theme") == "default"


def test_full_file(tmp_path: Path) -> None:
    path = write(tmp_path, """
[ui]
theme = "eagle-light"
max_lines = 20000
output_dir = "~/shots"
notify_critical = false

[[highlight]]
pattern = "TP[0-9]+"
style = "bold magenta"
""")
    cfg = load_config(path)
    assert cfg.theme == "eagle-light"
    assert cfg.max_lines == 20_000
    assert cfg.output_dir == Path("~/shots").expanduser()
    assert cfg.notify_critical is False
    assert [r.style for r in cfg.highlight_rules] == ["bold magenta"]
    assert cfg.highlight_rules[0].pattern.search("rank TP3")
    assert cfg.source_of("theme") == str(path)
    assert cfg.theme_dir == tmp_path / "themes"


def test_env_names_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, '[ui]\ntheme = "eagle-high-contrast"\n')
    monkeypatch.setenv("EAGLE_TUI_CONFIG", str(path))
    assert load_config().theme == "eagle-high-contrast"
    monkeypatch.setenv("EAGLE_TUI_CONFIG", str(tmp_path / "nope.toml"))
    with pytest.raises(ConfigError, match="does not exist"):
        load_config()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[ui]\nmax_lines = 5\n", "between 100 and 1,000,000"),
        ("[ui]\nmax_lines = \"many\"\n", "must be an integer"),
        ("[ui]\ncolour = \"red\"\n", "unknown key"),
        ("[fonts]\n", "unknown section"),
        ("[[highlight]]\npattern = \"(\"\nstyle = \"red\"\n", r"'\(' is refused: missing \)"),
        ("[[highlight]]\npattern = \"(?<=a)b\"\nstyle = \"red\"\n", "is refused: lookaround"),
        ("[[highlight]]\npattern = '(a)\\1'\nstyle = \"red\"\n", "is refused: backreferences"),
        ("[[highlight]]\npattern = \"a{1001}\"\nstyle = \"red\"\n", "invalid repetition size"),
        ("[[highlight]]\npattern = \"x\"\nstyle = \"not-a-colour\"\n", "not a valid Rich style"),
        ("[[highlight]]\npattern = \"x\"\n", "must both be strings"),
        ("ui = 3\n", "must be a table"),
        ("[ui\n", "not valid TOML"),
    ],
)
def test_bad_values_are_clear_errors(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config(write(tmp_path, text))


def test_replace_records_origin() -> None:
    cfg = UiConfig().replace(max_lines=500)
    assert cfg.max_lines == 500
    assert cfg.source_of("max_lines") == "command line"
