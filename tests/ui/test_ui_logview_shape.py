"""The log view is built by composition: one widget class of its own over Textual's ScrollView,
holding plain parts, and its own private names never shadow Textual's."""

from __future__ import annotations

import ast
import inspect

from textual.scroll_view import ScrollView

from eagle_tui.ui.widgets import logfile, logrender, logscroll, logsearch, logview
from eagle_tui.ui.widgets.forward import forwarded
from eagle_tui.ui.widgets.logview import LogView


def _ours(cls: type) -> list[type]:
    return [c for c in cls.__mro__ if c.__module__.startswith("eagle_tui")]


def test_logview_is_at_most_two_classes_of_its_own_deep() -> None:
    ours = _ours(LogView)
    assert LogView in ours and len(ours) <= 2, ours
    assert issubclass(LogView, ScrollView)


def test_the_parts_are_plain_classes() -> None:
    """The parts inherit from nothing of eagle_tui's nor Textual's (no mixins, no widgets)."""
    for part in (logscroll.Scroller, logrender.RowRenderer, logfile.FilePart, logsearch.Finder):
        assert part.__mro__ == (part, object), part.__mro__


def _private(names: set[str]) -> set[str]:
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


def test_no_private_name_of_the_view_shadows_textuals() -> None:
    """A name the view defines (a method, or ``self._x = ...``) that Textual's ScrollView also
    has would silently replace Textual's own (``_render``, ``_scroll_update``...)."""
    tree = ast.parse(inspect.getsource(logview))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "LogView")
    defined = {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}
    defined |= {n.attr for n in ast.walk(cls) if isinstance(n, ast.Attribute)
                and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name)
                and n.value.id == "self"}
    assert {"_scroller", "_draw", "_file", "_finder", "_post_status"} <= defined
    textual = _private({n for c in ScrollView.__mro__ for n in vars(c)}
                       | set(vars(ScrollView())))
    assert "_render" in textual and "_scroll_update" in textual  # the check can catch one
    assert _private(defined) & textual == set()


def test_every_forwarded_attribute_resolves() -> None:
    """Each public attribute the view forwards to a part names one that exists."""
    view = LogView()
    names = forwarded(LogView)
    assert {"follow", "unseen", "file", "file_cursor", "file_rows", "paint_pending"} <= set(names)
    for name, fwd in names.items():
        part = getattr(view, fwd.part)
        assert hasattr(part, fwd.attr), (name, fwd.part, fwd.attr)
        getattr(view, name)


def test_a_forwarded_attribute_reads_and_writes_the_parts_state() -> None:
    view = LogView()
    assert view.follow is True
    view.follow = False
    assert view._scroller.follow is False
    view.unseen = 3
    assert view.status().unseen == 3
    try:
        view.file_rows = 5  # type: ignore[misc]
    except AttributeError:
        pass
    else:
        raise AssertionError("file_rows is read-only")
    assert view.file_rows == 0
