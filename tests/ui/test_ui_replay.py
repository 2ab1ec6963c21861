"""``eagle-tui replay``: record → replay headless and through the dashboard; usage errors."""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import pytest

from eagle_tui.assembly.open import prepare_dashboard, run_headless, ui_config, wants_dashboard
from eagle_tui.assembly.spec import DashboardSpec, spec_from_args
from eagle_tui.cli import main
from eagle_tui.session import Session
from eagle_tui.sources.scripted import ScriptedSource
from eagle_tui.ui.config import ConfigError, UiConfig
from tests.support.ui_helpers import settle
from tests.support.ui_scenarios import SCENARIOS

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


async def record(tmp_path: Path, scenario: str) -> Path:
    path = tmp_path / f"{scenario}.jsonl"
    session = Session([ScriptedSource(SCENARIOS[scenario]())], record=path, tick_interval=None,
                      batch_interval=0.0)
    await session.run()
    return path


def replay_args(path: Path, **kw: object) -> argparse.Namespace:
    base: dict[str, object] = {"file": path, "kind": "auto", "speed": None, "headless": False,
                               "json": False, "config": None, "theme": None, "max_lines": None}
    base.update(kw)
    return argparse.Namespace(**base)


def ui_spec(args: argparse.Namespace) -> DashboardSpec:
    """The dashboard part of a replay's spec (``args.file`` may not exist here)."""
    return DashboardSpec(config_path=args.config, theme=args.theme, max_lines=args.max_lines)


async def test_headless_replay_of_a_crash_exits_1(tmp_path: Path) -> None:
    rec = await record(tmp_path, "oom_crash")
    args = replay_args(rec, headless=True)
    out = io.StringIO()
    rc = await run_headless(spec_from_args(args, "replay"), None, (), out, io.StringIO())
    assert rc == 1
    assert "cuda_oom" in out.getvalue()


def test_cli_replay_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    assert main(["replay", str(tmp_path / "missing.jsonl")]) == 2
    assert "no such file" in capsys.readouterr().err
    log = tmp_path / "server.log"
    log.write_text("hello\n", encoding="utf-8")
    with pytest.raises(SystemExit) as exc:  # refused by argparse, in the config's range
        main(["replay", str(log), "--max-lines", "5"])
    assert exc.value.code == 2
    assert "--max-lines: must be a number of log lines from 100" in capsys.readouterr().err
    bad = tmp_path / "bad.toml"
    bad.write_text("[ui]\nmax_lines = 1\n", encoding="utf-8")
    assert main(["replay", str(log), "--config", str(bad)]) == 2
    assert "max_lines" in capsys.readouterr().err


def test_cli_replay_of_a_real_vllm_log_headless(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["replay", str(FIXTURES / "vllm-cpu" / "server-eagle3.log"), "--headless"])
    assert rc == 0
    assert capsys.readouterr().out.strip()


async def test_replay_through_the_dashboard_rebuilds_the_recorded_state(tmp_path: Path) -> None:
    rec = await record(tmp_path, "misconfigured")
    app = prepare_dashboard(spec_from_args(replay_args(rec), "replay"), config=UiConfig()).app
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        assert app.session_done
        assert {a.kind for a in app.state.alerts} >= {"eagle3_draft_with_eagle", "hidden_dims"}
        assert app.log_view.line_count == app.state.log.lines
        assert app.state.config.hidden_dims == (7168,)


async def test_replay_of_a_raw_log_shows_its_lines(tmp_path: Path) -> None:
    log = FIXTURES / "vllm-cpu" / "server-eagle3.log"
    app = prepare_dashboard(spec_from_args(replay_args(log), "replay"), config=UiConfig()).app
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        texts = app.log_view.texts()
        assert len(texts) == log.read_bytes().count(b"\n")
        assert any("SpecDecoding metrics" in t for t in texts)
        assert app.state.startup.engine == "vllm"


def test_config_from_args_and_dashboard_choice(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EAGLE_TUI_CONFIG", str(tmp_path / "none.toml"))
    with pytest.raises(ConfigError):
        ui_config(ui_spec(replay_args(tmp_path)))
    monkeypatch.delenv("EAGLE_TUI_CONFIG")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    cfg = ui_config(ui_spec(replay_args(tmp_path, theme="eagle-light", max_lines=500)))
    assert (cfg.theme, cfg.max_lines) == ("eagle-light", 500)
    assert cfg.source_of("theme") == "command line"
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    assert wants_dashboard(DashboardSpec(headless=False, json=False))
    assert not wants_dashboard(DashboardSpec(headless=True, json=False))
    assert not wants_dashboard(DashboardSpec(headless=False, json=True))
    ns = DashboardSpec(log="/var/log/sglang/server.log", url=None, pid=None)
    assert ns.source_label("gpu-box") == "gpu-box:server.log"
    assert DashboardSpec(log=None, url="http://h:1", pid=None).source_label() == "http://h:1"


def test_building_the_cli_does_not_load_textual() -> None:
    """`wait`, `report` and headless `watch` must not pay Textual's import time (~0.2 s)."""
    import subprocess
    import sys

    code = ("import sys, eagle_tui.cli as c; c.build_parser(); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True).stdout.strip()
    assert out == "[]"
