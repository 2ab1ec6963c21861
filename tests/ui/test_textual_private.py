"""``ui/textual_private.py`` against the installed Textual: fails loudly when Textual changes.

That module is the only one that reaches into Textual's private API (see its docstring for what
each hook buys). Two kinds of check:

- every private name it uses exists with the shape it relies on;
- the Textual code it *copies* (the input loop, the scrollbar update) or whose *order* it relies
  on (the theme watcher's queued ``refresh_css``) is fingerprinted. A Textual upgrade that changes
  one fails here, naming the function: re-read it, bring ``textual_private`` in line, then update
  the fingerprint below.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import textual
from textual import _loop, _parser, _xterm_parser
from textual._compositor import Compositor
from textual._styles_cache import StylesCache
from textual.app import App
from textual.driver import Driver
from textual.drivers.linux_driver import LinuxDriver
from textual.widget import Widget

from eagle_tui.ui import textual_private

# sha256 (first 16 hex digits) of each function's dedented source, as of Textual 8.2.8
FINGERPRINTS: dict[str, tuple[Callable[..., Any], str]] = {
    # copied by textual_private.run_input_loop
    "LinuxDriver.run_input_thread": (LinuxDriver.run_input_thread, "03c4634c663e82c5"),
    # called by textual_private.scroll_update; repeated, minus the repaints, by
    # ui/widgets/scrollbars.sync_scrollbars
    "Widget._scroll_update": (Widget._scroll_update, "520a061d9e6bf463"),
    # queues the refresh_css that textual_private.defer_css_refresh shortens
    "App._watch_theme": (App._watch_theme, "585f469c9ae8ca2d"),
    # what defer_css_refresh leaves out before the first screen (reparse + update)
    "App.refresh_css": (App.refresh_css, "77928c0b6503177b"),
    # the render cache that textual_private.render_rows fills row by row, and the whole-widget
    # render it stands in for when only the rows it was given are dirty
    "Widget.render_line": (Widget.render_line, "5c2550212d752404"),
    "Widget._render_content": (Widget._render_content, "810737d547d11405"),
    # what textual_private.plain_rows draws without, for a widget whose styles add nothing
    "StylesCache.render_widget": (StylesCache.render_widget, "fd0c1472f4c8ede1"),
    "StylesCache.render": (StylesCache.render, "9cb213088b890263"),
    "StylesCache.render_line": (StylesCache.render_line, "fea8e1f875d5810f"),
    # what textual_private.RowCompositor._render_chops does with fewer widgets rendered: the
    # chops, the cuts and their "first one wins", and the partial update that calls it
    "Compositor._render_chops": (Compositor._render_chops, "08dba28b936cc6c0"),
    "Compositor._get_renders": (Compositor._get_renders, "f3af89eea81cdca4"),
    "Compositor.render_partial_update": (Compositor.render_partial_update, "342f61fb3b24dffe"),
}


def _fingerprint(fn: Callable[..., Any]) -> str:
    source = textwrap.dedent(inspect.getsource(fn))
    return hashlib.sha256(source.encode()).hexdigest()[:16]


@pytest.mark.parametrize("name", sorted(FINGERPRINTS))
def test_the_textual_code_relied_on_is_unchanged(name: str) -> None:
    fn, expected = FINGERPRINTS[name]
    assert _fingerprint(fn) == expected, (
        f"Textual {textual.__version__} changed {name}: re-read it, bring "
        f"eagle_tui/ui/textual_private.py in line, then update FINGERPRINTS")


def test_the_private_names_used_exist_with_their_shape() -> None:
    from textual import _context
    from textual.dom import DOMNode

    # composing_node reads the context variable Textual's own data_bind reads
    assert "active_message_pump.get()" in inspect.getsource(DOMNode.data_bind)
    assert isinstance(_context.active_message_pump, __import__("contextvars").ContextVar)
    assert issubclass(textual_private.EscapeParser, _xterm_parser.XTermParser)
    parse_source = inspect.getsource(_xterm_parser.XTermParser.parse)
    # the parser asks for characters through self.read1, with a timeout only for the ESC wait
    assert "read1 = self.read1" in parse_source
    assert "read1(constants.ESCAPE_DELAY)" in parse_source
    assert _parser.Read1._fields == ("timeout",)
    assert issubclass(_parser.ParseError, Exception)
    assert list(_loop.loop_last([1, 2])) == [(False, 1), (True, 2)]
    for method in ("feed", "tick"):
        assert callable(getattr(_xterm_parser.XTermParser, method))
    assert "self._debug = debug" in inspect.getsource(Driver.__init__)
    assert str(inspect.signature(Widget._refresh_scrollbars)) == "(self) -> 'None'"
    assert str(inspect.signature(Widget._scroll_update)) == "(self, virtual_size: 'Size') -> 'None'"
    assert "animate" in inspect.signature(App.refresh_css).parameters
    assert "_render_cache = _RenderCache(self.size, strips)" in inspect.getsource(
        Widget._render_content)
    assert str(inspect.signature(StylesCache.set_dirty)) == "(self, *regions: 'Region') -> 'None'"


def test_no_other_module_imports_textual_private_api() -> None:
    """The isolation itself: ``textual._`` appears in no other eagle_tui module."""
    root = Path(textual_private.__file__).parents[1]
    offenders = [str(p.relative_to(root)) for p in root.rglob("*.py")
                 if p.name != "textual_private.py"
                 and ("from textual._" in p.read_text() or "import textual._" in p.read_text())]
    assert offenders == []


def _textual_private_names() -> set[str]:
    """The private names of the Textual classes eagle-tui builds on (methods and instance
    attributes), plus every ``._name`` that ``textual_private`` itself reaches for."""
    from textual.drivers.linux_driver import LinuxDriver
    from textual.screen import Screen
    from textual.scroll_view import ScrollView
    from textual.scrollbar import ScrollBar
    from textual.widgets import Input, Static

    names = {n for cls in (App, Screen, ScrollView, ScrollBar, Static, Input, LinuxDriver)
             for c in cls.__mro__ for n in vars(c)}
    names |= set(vars(ScrollView())) | set(vars(Static())) | set(vars(App()))
    names |= _private_attributes(Path(textual_private.__file__))
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


def _private_attributes(path: Path) -> set[str]:
    return {n.attr for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Attribute)
            and n.attr.startswith("_") and not n.attr.startswith("__")}


def test_no_other_ui_module_reaches_a_textual_private_attribute() -> None:
    """``obj._name`` with ``_name`` one of Textual's private names (``view._scroll_update``,
    ``screen._compositor``...) appears in no ``eagle_tui/ui`` module but ``textual_private``:
    the UI's own private names stay clear of Textual's too (one would shadow it)."""
    textual_names = _textual_private_names()
    assert {"_scroll_update", "_refresh_scrollbars", "_compositor"} <= textual_names
    ui = Path(textual_private.__file__).parent
    offenders = sorted(f"{p.relative_to(ui)}: {name}" for p in ui.rglob("*.py")
                       if p.name != "textual_private.py"
                       for name in _private_attributes(p) & textual_names)
    assert offenders == []
