"""The widgets' entry to the one sanitizer (:func:`eagle_tui.model.boundary.termtext.inert`).

The parser already sanitizes every log line, but Textual passes ESC straight to the terminal
(a log line can retitle the tmux pane, clear the screen, leave the alternate screen:
``tests/unit/model/ingest/test_hostile_documents.py`` and the UI tests feed such lines).
Crash messages, alert texts, model names and GPU process names also come from the server, so
every widget runs them through :func:`inert` anyway: one C-level check on a clean line is cheap
insurance against a source that forgot.

The additions to the model's sanitizer are layout: TABs are expanded (a raw TAB would make the
rendered width differ from the cell count), and characters whose width Rich and the terminal
disagree on are replaced (:func:`eagle_tui.ui.sinks.inert`, which every sink applies too).
Markup is the other half of "inert": the result goes into ``Content``/``Text`` objects or a sink
of ``ui/sinks.py``, never into a markup-parsing ``str`` parameter.
"""

from __future__ import annotations

from eagle_tui.model.boundary.termtext import REPLACEMENT, Inert, is_inert
from eagle_tui.ui.sinks import inert as _inert


def inert(text: str) -> Inert:
    """``text`` with escape sequences removed, other controls replaced by U+FFFD, TABs expanded,
    characters of disputed width replaced (:func:`~eagle_tui.ui.cellwidth.settle`).

    Clean text is returned unchanged (same object), which keeps the hot path allocation-free.
    """
    if "\t" in text:
        text = text.expandtabs(4)
    return _inert(text)


__all__ = ["REPLACEMENT", "Inert", "inert", "is_inert"]
