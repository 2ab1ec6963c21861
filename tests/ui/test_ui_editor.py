"""The relaunch editor (``E``): one argument a line in a TextArea a person can edit.

Opened, nothing is selected (the first key typed changes one character, not the command);
ctrl+z / ctrl+y undo and redo; a pasted flag is one more line; the diff to the running command
follows the edit; Enter hands the argv the lines mean to ``submit``; ctrl+j adds a line; the
JSON fields of ``--speculative-config`` are edited one a line and joined back; secrets stay
masked on screen and come back (the control's ``restore_secrets``) on submit.
"""

from __future__ import annotations

import json
from typing import Any

from textual import events
from textual.app import App, ComposeResult
from textual.widgets import Static

from eagle_tui.assembly.control import restore_secrets
from eagle_tui.model.boundary.shellwords import join, split
from eagle_tui.model.launching.cmdlines import lines_argv
from eagle_tui.model.launching.control import Relaunch
from eagle_tui.ui.control import EditScreen as ReExported
from eagle_tui.ui.screens.editor import CommandArea, EditScreen

SG = ["python", "-m", "sglang.launch_server", "--model-path", "/models/my model",
      "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--port=30000"]
VL = ["vllm", "serve", "meta/llama", "--speculative-config",
      json.dumps({"method": "eagle", "model": "draft", "num_speculative_tokens": 3}),
      "--port", "8000"]


class Host(App[None]):
    def __init__(self, screen: EditScreen) -> None:
        super().__init__()
        self.editor = screen

    def compose(self) -> ComposeResult:
        yield Static("host")

    def on_mount(self) -> None:
        self.push_screen(self.editor)


def editor(argv: list[str], original: list[str] | None = None) -> tuple[EditScreen, list[Any]]:
    sent: list[Relaunch] = []
    return EditScreen("#7", join(argv), sent.append,
                      original=None if original is None else join(original)), sent


def diff_text(screen: EditScreen) -> str:
    return str(screen.query_one("#edit-diff", Static).render())


async def test_opens_with_nothing_selected_and_a_key_changes_one_character() -> None:
    assert ReExported is EditScreen  # ui.control's name keeps working
    screen, sent = editor(SG)
    async with Host(screen).run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        area = screen.area
        assert area.has_focus and area.selected_text == ""
        lines = area.text.split("\n")
        assert lines == ["python -m sglang.launch_server", "--model-path '/models/my model'",
                         "--speculative-algorithm EAGLE", "--speculative-num-steps 3",
                         "--port=30000"]
        assert area.cursor_location == (1, len(lines[1]))  # the end of the first flag line
        assert "no change" in diff_text(screen)
        await pilot.press("x")
        after = area.text.split("\n")
        assert after[1] == lines[1] + "x" and after[:1] + after[2:] == lines[:1] + lines[2:]
        await pilot.press("ctrl+z")
        assert area.text.split("\n") == lines
        await pilot.press("ctrl+y")
        assert area.text.split("\n") == after
    assert sent == []


async def test_edit_shows_in_the_diff_and_enter_submits_the_argv() -> None:
    screen, sent = editor(SG)
    async with Host(screen).run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        area = screen.area
        area.move_cursor((2, len("--speculative-algorithm EAGLE")))
        await pilot.press("3")
        await pilot.pause()
        assert "~ --speculative-algorithm EAGLE  →  --speculative-algorithm EAGLE3" in \
            diff_text(screen)
        await pilot.press("ctrl+j")  # a new argument line, not a submit
        assert sent == [] and area.text.split("\n")[3] == ""
        await pilot.press(*"--dtype", "space", *"bfloat16")
        await pilot.pause()
        assert "+ --dtype bfloat16" in diff_text(screen)
        await pilot.press("enter")
        await pilot.pause()
    want = [*SG[:6], "EAGLE3", "--dtype", "bfloat16", *SG[7:]]
    assert [split(r.command) for r in sent] == [want] and not sent[0].force


async def test_paste_a_flag_line() -> None:
    screen, sent = editor(SG)
    async with Host(screen).run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        area = screen.area
        area.move_cursor((4, len("--port=30000")))
        pilot.app.post_message(events.Paste("\n--mem-fraction-static 0.8"))  # (as a terminal)
        await pilot.pause()
        assert area.text.split("\n")[-1] == "--mem-fraction-static 0.8"
        assert "+ --mem-fraction-static 0.8" in diff_text(screen)
        await pilot.press("enter")
        await pilot.pause()
    assert split(sent[0].command) == [*SG, "--mem-fraction-static", "0.8"]


async def test_opens_at_the_line_that_differs_from_the_running_command() -> None:
    fixed = [*SG[:6], "EAGLE3", *SG[7:]]
    screen, sent = editor(fixed, original=SG)
    async with Host(screen).run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert screen.area.cursor_location == (2, len("--speculative-algorithm EAGLE3"))
        assert "~ --speculative-algorithm EAGLE  →  --speculative-algorithm EAGLE3" in \
            diff_text(screen)
        await pilot.press("enter")  # the "F, Enter" loop: two keys
        await pilot.pause()
    assert [split(r.command) for r in sent] == [fixed]


async def test_speculative_config_fields_edited_and_joined() -> None:
    screen, sent = editor(VL)
    async with Host(screen).run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        area = screen.area
        lines = area.text.split("\n")
        assert lines[1:4] == ["--speculative-config.method eagle",
                              "--speculative-config.model draft",
                              "--speculative-config.num_speculative_tokens 3"]
        assert area.cursor_location == (1, len(lines[1]))
        await pilot.press("3")
        await pilot.pause()
        assert "--speculative-config.method eagle3" in diff_text(screen)
        await pilot.press("enter")
        await pilot.pause()
    words = split(sent[0].command)
    assert words[:4] == VL[:4] and words[5:] == VL[5:]
    assert json.loads(words[4]) == {"method": "eagle3", "model": "draft",
                                    "num_speculative_tokens": 3}


async def test_secrets_are_not_shown_and_come_back_on_submit() -> None:
    real = ["HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz", *SG, "--api-key", "sk-secret-value-123456"]
    screen, sent = editor(real)  # (given unmasked: the editor masks what it shows)
    async with Host(screen).run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        text = screen.area.text
        assert "hf_abc" not in text and "sk-secret" not in text
        assert "'HF_TOKEN=***'" in text.split("\n") and "--api-key '***'" in text.split("\n")
        screen.area.move_cursor((5, len("--port=30000")))
        await pilot.press("0")
        await pilot.press("enter")
        await pilot.pause()
    restored = restore_secrets(split(sent[0].command), real)
    assert restored == [*real[:-3], "--port=300000", "--api-key", "sk-secret-value-123456"]


async def test_lint_findings_then_enter_again_launches_anyway_and_esc_cancels() -> None:
    screen, sent = editor(SG)
    async with Host(screen).run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        screen.show_findings(("error: EAGLE needs a draft model",), screen.submitted)
        await pilot.pause()
        assert "draft model" in str(screen.query_one("#edit-findings", Static).render())
        await pilot.press("enter")
        await pilot.pause()
        assert [r.force for r in sent] == [False, True]
        screen.failed("ssh: connection refused")
        await pilot.press("x")  # an edit: linted again, not forced
        await pilot.press("enter")
        await pilot.pause()
        assert [r.force for r in sent] == [False, True, False]
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(pilot.app.screen, EditScreen)


async def test_an_unclosed_quote_is_named_not_sent() -> None:
    screen, sent = editor(SG)
    async with Host(screen).run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("apostrophe", "enter")  # (the cursor is on line 2)
        await pilot.pause()
        assert "line 2" in str(screen.query_one("#edit-findings", Static).render())
        assert isinstance(screen.area, CommandArea)
    assert sent == []


def test_each_mask_goes_back_to_its_own_flag_when_lines_move() -> None:
    real = ["HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz", *SG, "--admin-api-key", "admin-secret-7",
            "--api-key", "sk-secret-value-123456"]
    ls = EditScreen("#1", join(real), lambda r: None).start_lines
    assert "--admin-api-key '***'" in ls and "--api-key '***'" in ls
    moved = [ls[-1], *ls[:-1]]  # the --api-key line first
    words = restore_secrets(lines_argv("\n".join(moved), None), real)
    assert words[words.index("--api-key") + 1] == "sk-secret-value-123456"
    assert words[words.index("--admin-api-key") + 1] == "admin-secret-7"
    renamed = restore_secrets(["--key", "***", "--admin-key", "***"], real)
    assert renamed[1] == "admin-secret-7" and renamed[3] == "sk-secret-value-123456"  # in order


async def test_a_toast_shown_before_does_not_cover_the_hint() -> None:
    """F pressed while an alert's toast is up (10 s): on an 80×24 terminal the toast covered
    the box's hint line, where what Enter does is said."""
    from textual.widgets._toast import Toast

    screen, _ = editor([*SG, "--mem-fraction-static", "0.8", "--tp", "8", "--cuda-graph-max-bs",
                        "64", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens",
                        "4", "--speculative-draft-model-path", "/models/draft"])
    app = Host(screen)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await pilot.pause()
        app.pop_screen()
        app.notify("x" * 150, title="eagle_mismatch", severity="error", timeout=10)
        await pilot.pause()
        app.push_screen(screen)
        await pilot.pause(0.3)
        hint = screen.query_one("#edit-hint", Static).region
        assert hint.height > 0
        assert not [t for t in app.screen.query(Toast) if t.region.overlaps(hint)]
