"""The dashboard folds eagle-tui's own poll lines (``o`` shows them) and marks bench windows."""

from __future__ import annotations

from eagle_tui.model.bench.windows import marker_query, own_path
from eagle_tui.model.events import LineKind, LogLine
from eagle_tui.ui.textual_private import screen_text
from tests.support.ui_helpers import make_app, settle


def _access(n: int, path: str) -> LogLine:
    text = f'INFO:     127.0.0.1:4{n:04d} - "GET {path} HTTP/1.1" 200 OK'
    return LogLine(n, text, LineKind.ACCESS)


async def test_own_polls_fold_and_o_shows_them_and_windows_show_as_separators() -> None:
    events = [LogLine(1, "server started"),
              *[_access(n, own_path("/health")) for n in range(2, 12)],
              _access(12, "/health?" + marker_query("ab12", "start", t=100.0)),
              _access(13, "/health?" + marker_query("ab12", "end", t=104.0, tokens=400,
                                                    events=130, requests=4))]
    app = make_app(events)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app, expect_lines=13)
        text = screen_text(app)
        assert "10 eagle-tui polls folded (o)" in text
        assert "/health?eagle-tui HTTP" not in text
        assert "bench window ab12 ended · 4.0 s, 4 requests · client accept 3.14" in text
        await pilot.press("o")
        await settle(pilot, app)
        text = screen_text(app)
        assert "/health?eagle-tui HTTP" in text and "eagle-tui polls shown (o)" in text
