"""The dashboard on ``--container``: the status line names the container and its state where
it names the host and the file of a log, and the log view shows the container's lines."""

from __future__ import annotations

import asyncio
import time

import pytest

from eagle_tui.assembly.containers import resolved
from eagle_tui.assembly.open import prepare_dashboard
from eagle_tui.assembly.spec import DashboardSpec, check_sources
from eagle_tui.ui.config import UiConfig
from eagle_tui.ui.textual_private import screen_text
from tests.containers.test_container_log import _script
from tests.support.containers import ContainerEngine


async def test_the_dashboard_names_the_container(containers: ContainerEngine,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in containers.env.items():
        monkeypatch.setenv(key, value)
    name = containers.name("dash")
    containers.run(name, _script(30, "sleep 600"))
    try:
        spec = await asyncio.to_thread(
            resolved, check_sources(DashboardSpec(container=name, gpu="none")))
        assert spec.container_cli == "docker"  # auto: the first CLI that knows it
        dashboard = prepare_dashboard(spec, config=UiConfig())
        app = dashboard.app
        try:
            async with app.run_test(size=(160, 48)) as pilot:
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline and not (
                        "out 29" in screen_text(app) or "err 29" in screen_text(app)):
                    await pilot.pause(0.2)
                text = screen_text(app)
                # the log's last lines (either stream's may come last)
                assert "out 29" in text or "err 29" in text, text
                # the status line names the container; its state is the live process's
                status = next(x for x in text.splitlines() if f"container {name}" in x)
                assert "running" not in status.split(f"container {name}")[1], status
        finally:
            dashboard.close()
    finally:
        containers.remove(name)
