"""Export the documentation screenshots with the app itself (``App.save_screenshot``).

Each image is the real dashboard, built by ``build_app`` on a scripted session (the scenarios of
the UI tests, ``tests/support/ui_scenarios.py``), so the pictures in ``docs/img/`` always match what
the code draws. Re-run after a visible change:

    python docs/make_images.py          # all of them
    python docs/make_images.py fleet    # only the fleet screen
    python docs/make_images.py editor   # only the relaunch editor
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # a script: tests.support is found from the checkout

from eagle_tui.ui.config import UiConfig  # noqa: E402
from tests.support.ui_helpers import make_app, settle  # noqa: E402
from tests.support.ui_scenarios import SCENARIOS  # noqa: E402

TOASTS = {"misconfigured-160x48", "oom-banner-160x48"}  # images that show the notifications

IMAGES: list[tuple[str, str, tuple[int, int], str, tuple[str, ...]]] = [
    # file name, scenario, size, theme, keys pressed before the export
    ("overview-160x48", "ready_metrics", (160, 48), "eagle-dark", ()),
    ("loading-weights-80x24", "loading_weights", (80, 24), "eagle-dark", ()),
    ("capturing-graphs-160x48", "capturing_graphs", (160, 48), "eagle-dark", ()),
    ("oom-banner-160x48", "oom_crash", (160, 48), "eagle-dark", ()),
    ("oom-banner-80x24", "oom_crash", (80, 24), "eagle-dark", ()),
    ("misconfigured-160x48", "misconfigured", (160, 48), "eagle-dark", ()),
    ("misconfigured-alerts-80x24", "misconfigured", (80, 24), "eagle-dark", ("5",)),
    ("gpus-8x-80x24", "misconfigured", (80, 24), "eagle-dark", ("3", "down", "down")),
    ("metrics-80x24", "ready_metrics", (80, 24), "eagle-dark", ("4",)),
    ("no-gpu-160x48", "no_gpu", (160, 48), "eagle-dark", ()),
    ("log-filter-160x48", "ready_metrics", (160, 48), "eagle-dark",
     ("slash", "D", "E", "B", "U", "G", "enter")),
    ("help-160x48", "ready_metrics", (160, 48), "eagle-dark", ("question_mark",)),
    ("ssh-two-hosts-160x48", "two_hosts", (160, 48), "eagle-dark", ()),
    ("light-160x48", "ready_metrics", (160, 48), "eagle-light", ()),
    ("high-contrast-160x48", "misconfigured", (160, 48), "eagle-high-contrast", ()),
]


async def export(name: str, scenario: str, size: tuple[int, int], theme: str,
                 keys: tuple[str, ...], out: Path) -> Path:
    app = make_app(SCENARIOS[scenario](), UiConfig(theme=theme))
    app.animation_level = "none"
    async with app.run_test(size=size, notifications=True) as pilot:
        await settle(pilot, app)
        for key in keys:
            await pilot.press(key)
        if name not in TOASTS:  # elsewhere the critical-alert toasts would hide the pane shown
            app.clear_notifications()
        await settle(pilot, app)
        path = Path(app.save_screenshot(f"{name}.svg", str(out)))
    return path


async def export_fleet(out: Path, size: tuple[int, int] = (160, 20)) -> Path:
    """The fleet screen on the scripted fleet of its Pilot tests (tests/ui/test_fleet_app.py)."""
    from tests.ui.test_fleet_app import make, snap

    app = make(snap())
    async with app.run_test(size=size) as pilot:
        for _ in range(200):
            if app.snapshot is not None:
                break
            await pilot.pause(0.01)
        await pilot.pause()
        path = Path(app.save_screenshot(f"fleet-{size[0]}x{size[1]}.svg", str(out)))
    return path


async def export_editor(out: Path, size: tuple[int, int] = (120, 40)) -> Path:
    """The relaunch editor over the misconfigured run, the fix typed (its snapshot test's)."""
    from tests.support.editor_scenario import editor_screen

    app = make_app(SCENARIOS["misconfigured"](), UiConfig(theme="eagle-dark"))
    app.animation_level = "none"
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        app.clear_notifications()
        await app.push_screen(editor_screen())
        await settle(pilot, app)
        path = Path(app.save_screenshot(f"editor-{size[0]}x{size[1]}.svg", str(out)))
    return path


async def main() -> None:
    out = HERE / "img"
    out.mkdir(exist_ok=True)
    only = sys.argv[1:2]
    for spec in () if only else IMAGES:
        print(await export(*spec, out))
    if only in ([], ["fleet"]):
        print(await export_fleet(out))
    if only in ([], ["editor"]):
        print(await export_editor(out))


if __name__ == "__main__":
    asyncio.run(main())
