"""DashboardSpec: the one typed description a dashboard (or its headless presenter) opens from."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from eagle_tui.assembly.build import build_session
from eagle_tui.assembly.spec import DashboardSpec, check_sources, spec_from_args
from eagle_tui.commands import replay, watch
from eagle_tui.errors import UsageError
from tests.support.paths import TESTS

FIXTURES = TESTS / "fixtures"


def parse(command: str, *argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    {"watch": watch, "replay": replay}[command].register(sub)
    return parser.parse_args([command, *argv])


def test_the_command_line_becomes_one_frozen_spec(tmp_path: Path) -> None:
    args = parse("watch", "--log", str(tmp_path / "s.log"), "--url", "127.0.0.1:30000/health",
                 "--pid", "42", "--baseline", "90", "--gpu", "smi", "--record",
                 str(tmp_path / "r.jsonl"), "--theme", "eagle-light", "--max-lines", "500",
                 "--headless", "--duration", "3")
    spec = spec_from_args(args, "watch")
    assert spec.url == "http://127.0.0.1:30000"  # normalized once, here
    assert (spec.log, spec.pid, spec.baseline, spec.gpu) == (str(tmp_path / "s.log"), 42, 90.0,
                                                             "smi")
    assert (spec.theme, spec.max_lines, spec.headless, spec.duration) == ("eagle-light", 500,
                                                                         True, 3.0)
    assert spec.record == tmp_path / "r.jsonl" and spec.replay is None and not spec.is_remote
    assert spec.health_decides() and spec.source_label("box") == "box:s.log"
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.url = "http://elsewhere"  # type: ignore[misc]


def test_bad_specs_are_usage_errors_before_anything_starts(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="at least one of"):
        spec_from_args(parse("watch"), "watch")
    with pytest.raises(UsageError, match="is a directory"):
        spec_from_args(parse("watch", "--log", str(tmp_path)), "watch")
    with pytest.raises(UsageError, match="need --ssh"):
        spec_from_args(parse("watch", "--log", "x", "--accept-new-host-key"), "watch")
    with pytest.raises(UsageError, match="given twice"):
        spec_from_args(parse("watch", "--log", "x", "--ssh", "a", "--ssh", "a"), "watch")
    with pytest.raises(UsageError, match="no such file"):
        spec_from_args(parse("replay", str(tmp_path / "missing.jsonl")), "replay")
    raw = tmp_path / "server.log"
    raw.write_text("[2026-12-01 10:00:00] server_args=ServerArgs(model_path='m')\n")
    with pytest.raises(UsageError, match="not an eagle-tui record"):  # (a backoff a line)
        spec_from_args(parse("replay", str(raw), "--kind", "record"), "replay")
    assert spec_from_args(parse("replay", str(raw)), "replay").replay is not None  # (auto: log)
    with pytest.raises(UsageError, match="--gpu"):  # a spec built in code gets the same checks
        check_sources(DashboardSpec(log="x", gpu="cuda"))


def test_a_replay_spec_builds_one_replay_source_without_a_ticker() -> None:
    log = FIXTURES / "vllm-cpu" / "server-eagle3.log"
    spec = spec_from_args(parse("replay", str(log), "--speed", "2"), "replay")
    assert spec.replay is not None and spec.replay.speed == 2.0
    assert spec.source_label() == "replay server-eagle3.log"
    session = build_session(spec)
    assert [type(s).__name__ for s in session.sources] == ["ReplaySource"]
    assert session.tick_interval is None


def test_a_live_spec_builds_the_sources_it_names(tmp_path: Path) -> None:
    spec = check_sources(DashboardSpec(log=str(tmp_path / "s.log"), gpu="none", baseline=50.0))
    names = sorted(type(s).__name__ for s in build_session(spec).sources)
    # (a log to watch also gets the model-download watcher: the startup's verdict)
    assert names == ["DownloadWatcher", "DraftConfigSource", "GpuOff", "LogTail",
                     "ProcessWatcher"]


async def test_gpu_none_says_sampling_is_off_once() -> None:
    from eagle_tui.model.events import GpuSample
    from eagle_tui.sources.gpu import GpuOff

    samples = [e async for e in GpuOff().events()]
    assert len(samples) == 1 and isinstance(samples[0], GpuSample)
    assert samples[0].state == "off" and "--gpu none" in samples[0].error


def test_open_dashboard_headless_runs_the_presenter_over_the_threaded_session() -> None:
    import io
    import threading

    from eagle_tui.assembly.open import open_dashboard
    from eagle_tui.assembly.threaded import session_opener
    from eagle_tui.model.events import LogLine, Tick
    from eagle_tui.session import Session
    from eagle_tui.sources.scripted import ScriptedSource

    session = Session([ScriptedSource([Tick(1.0), LogLine(1, "hello")])], tick_interval=None)
    threads: set[str] = set()
    out = io.StringIO()
    rc = open_dashboard(DashboardSpec(headless=True), opener=session_opener(session), out=out,
                        subscribers=[lambda _s, _e: threads.add(threading.current_thread().name)])
    assert rc == 0 and "phase: none" in out.getvalue()
    assert threads == {"eagle-session"}  # the same session thread as the dashboard's
    assert session.finished and session.state.log.lines == 1


def test_a_launched_run_says_its_speculative_settings_before_the_log_does(
        tmp_path: Path) -> None:
    """``launch``'s command is read the engine's way (its lint plan) into a ``SpecConfig`` the
    session starts with: speculation is known to be configured from the command line."""
    from eagle_tui.launch.plan import Prepared
    from eagle_tui.model.events import SpecConfig
    from eagle_tui.model.launching.cmdline import parse_command
    from eagle_tui.probe.tables import load_tables

    tables = load_tables()
    sg = parse_command(["python", "-m", "sglang.launch_server", "--model-path", "/m",
                        "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path",
                        "/d", "--speculative-num-steps", "3"], tables)
    vl = parse_command(["vllm", "serve", "/m", "--speculative-config",
                        '{"method": "eagle3", "model": "/d", "num_speculative_tokens": 4}'],
                       tables)
    plain = parse_command(["vllm", "serve", "/m"], tables)
    no_lint: Any = None  # (the settings are read from the command alone)
    specs = [Prepared(argv=[], cmd=c, result=no_lint, cwd="/").spec_config
             for c in (sg, vl, plain)]
    assert specs[0] is not None and (specs[0].algorithm, specs[0].draft_model,
                                     specs[0].num_steps, specs[0].source) == ("EAGLE3", "/d", 3,
                                                                              "launch")
    assert specs[1] is not None and (specs[1].algorithm, specs[1].draft_model) == ("eagle3",
                                                                                   "/d")
    assert specs[2] is None
    spec = check_sources(DashboardSpec(log=str(tmp_path / "s.log"), gpu="none",
                                       launched_spec=specs[0]))
    session = build_session(spec)
    assert [e for e in session._pending if isinstance(e, SpecConfig)] == [specs[0]]
