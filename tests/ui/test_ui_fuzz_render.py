"""The widget half of the full-path fuzz (``tests/unit/model/buffers/test_fuzz_full_path.py``).

Hostile logs (escape sequences, controls, Rich markup, invalid UTF-8, huge numbers, mutated
engine lines), parsed as the dashboard parses them, appended to the real ``LogView`` in a
running app, and drawn through Textual's Line API: no segment that would reach the terminal
holds ESC or another control byte, markup stays literal text, nothing raises. A seeded generator
(the same cases every run), 60 logs of up to 40 lines, redrawn at several widths.
"""

from __future__ import annotations

import random
import re

from textual.app import App, ComposeResult

from eagle_tui.model.events import LogLine
from eagle_tui.model.ingest.logfeed import LogFeed
from eagle_tui.model.ingest.parser import LogParser
from eagle_tui.ui.theme import builtin_themes, load_stylesheet, variable_defaults
from eagle_tui.ui.widgets.logview import LogView

UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
PIECES = [b"\x1b[2J", b"\x1b]0;pwned\x07", b"\x1b]8;;http://x\x1b\\", b"\x1bP1$q\x1b\\", b"\x9b31m",
          b"\x1b", b"\x07", b"\x00", b"\x7f", b"\r", b"\t", b"\xc2\x9b", b"\xe2\x80\xae", b"\xff",
          b"\xc3", b"[bold]", b"[/]", b"[link=http://x]x[/link]", b"[@click=quit]", b"9" * 300,
          b"[2025-11-20 10:14:31 TP0] Decode batch, #running-req: 1, #token: 9, token usage: "
          b"0.1, accept len: 2.5, gen throughput (token/s): 100.0, #queue-req: 0, ",
          b"Traceback (most recent call last):", b"RuntimeError: CUDA out of memory",
          b"INFO:     127.0.0.1:1 - \"GET /health HTTP/1.1\" 200 OK", b"plain text \xe4\xb8\xad"]


def hostile_logs(n: int, seed: int = 17) -> list[bytes]:
    rng = random.Random(seed)
    logs = []
    for _ in range(n):
        lines = []
        for _ in range(rng.randint(1, 40)):
            parts = [rng.choice(PIECES) for _ in range(rng.randint(1, 5))]
            parts.append(bytes(rng.randrange(256) for _ in range(rng.randint(0, 8))))
            lines.append(b"".join(parts))
        logs.append(b"\n".join(lines) + b"\n")
    return logs


class FuzzApp(App[None]):
    CSS = load_stylesheet()

    def __init__(self) -> None:
        super().__init__()
        for theme in builtin_themes():
            self.register_theme(theme)
        self.theme = "eagle-dark"

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return variable_defaults()

    def compose(self) -> ComposeResult:
        yield LogView(200)


async def test_hostile_logs_draw_no_control_byte() -> None:
    app = FuzzApp()
    async with app.run_test(size=(90, 30)) as pilot:
        view = app.query_one(LogView)
        for i, data in enumerate(hostile_logs(60)):
            feed = LogFeed(LogParser())
            events = feed.feed(data) + feed.caught_up() + feed.finish()
            view.append([e for e in events if type(e) is LogLine])
            if i % 20 == 19:
                await pilot.resize_terminal(50 + i, 30)
            await pilot.pause()
            for y in range(view.size.height):
                for seg in view.render_line(y):
                    assert "\x1b" not in seg.text and not UNSAFE.search(seg.text), seg.text
                    assert seg.style is None or seg.style.link is None
        texts = "\n".join(view.texts())
        assert "[bold]" in texts and "[link=http://x]x[/link]" in texts  # markup stays literal
