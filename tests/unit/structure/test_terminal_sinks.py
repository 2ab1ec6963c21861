"""No terminal sink bypasses the one text type: an AST scan of ``eagle_tui/``.

Every text that reaches the terminal goes through a sink that takes only
:data:`~eagle_tui.model.boundary.termtext.Inert` (``mypy --strict`` holds callers to it):
``console.say`` / ``console.warn`` for stdout and stderr, ``ui/sinks.py`` for widgets. This test
fails when code outside those modules writes to a terminal another way, so a new sink cannot forget
the sanitizer. What counts as a sink, by rule:

- ``print(...)``; ``.write``/``.writelines`` on ``sys.stdout``/``sys.stderr`` (or their
  ``__std*__``) or on a name the module annotates as a text stream (``out: TextIO``);
  ``json.dump`` to such a stream with ``ensure_ascii=False`` (the default escapes every control);
- a widget's text setters: ``.notify(``, ``.add_row(``/``.add_rows(``, ``.update_cell(``,
  ``.write_line(``, ``.update(`` and ``.write(`` on a widget in ``ui/`` (receivers that are
  not widgets are listed in :data:`NOT_WIDGETS` and :data:`FILES`), an assignment to
  ``title``, ``sub_title``, ``border_title``, ``border_subtitle`` or ``tooltip`` of anything
  but a literal;
- ``Static(...)``/``Label(...)`` built with anything but a literal (``sinks.static`` checks);
  in ``ui/``, any other Textual widget that draws a text it is given as it is (``Input``,
  ``TextArea``, ``Button``, ``Tab``...: :data:`TEXT_WIDGETS`) built with a text, positional or
  keyword (``value=``, ``placeholder=``...), that is neither a literal nor an ``inert(...)``
  call, and an assignment of such a text to an input's ``value``/``placeholder``
  (``sinks.line_input`` makes an input line);
- a widget's ``render`` method in ``ui/`` that never calls ``checked``/``checked_text``;
- ``Inert(x)`` on anything but a literal: the cast is for constants, ``inert()`` for the rest.

The second test writes one deliberate violation of each rule and checks the scanner reports it,
so a scanner that finds nothing cannot pass vacuously.
"""

from __future__ import annotations

import ast
import sys

import pytest

from tests.support.paths import REPO

ROOT = REPO / "eagle_tui"
# The sink modules themselves, and the one sanitizer (with its log-line form).
SINKS = {"console.py", "ui/sinks.py", "headless/streams.py", "model/boundary/termtext.py",
         "model/ingest/normalize.py"}
# Modules whose stdout/stderr are not eagle-tui's terminal output, each with its reason.
EXEMPT = {
    # The simulator is a fake engine run as its own process: its stdout/stderr are the engine's
    # log and a fake nvidia-smi's output, hostile lines included on purpose.
    "sim/": "a fake engine's own output",
}
STREAMS = {"sys.stdout", "sys.stderr", "sys.__stdout__", "sys.__stderr__"}
STREAM_TYPES = {"TextIO", "TextIOBase", "TextIOWrapper"}  # and IO[str]
# Text files eagle-tui writes that are never a terminal: the session record (recording.py).
NOT_TERMINAL = {"_record_file", "record_file"}
WIDGET_CALLS = {"notify", "add_row", "add_rows", "update_cell", "update_cell_at", "write_line"}
TITLES = {"title", "sub_title", "border_title", "border_subtitle", "tooltip"}
# Textual widgets whose first argument or these keywords and attributes are drawn as they are.
TEXT_WIDGETS = {"Input", "TextArea", "Button", "Tab", "TabPane", "Collapsible", "Checkbox",
                "RadioButton", "Option", "ListItem", "Digits", "Markdown", "Link", "Pretty",
                "Tree", "SelectionList", "OptionList", "Select"}
TEXT_KEYWORDS = {"value", "placeholder", "label", "text", "title", "prompt", "url", "tooltip",
                 "content", "renderable"}
INPUT_TEXTS = {"value", "placeholder"}
CLEANERS = {"inert", "inert_lines", "checked", "checked_text"}
# ``.update(`` receivers in ui/ that are not widgets (a model object, a set).
NOT_WIDGETS = {"self.history", "self.gpu_history", "self._draw.tags", "self.order", "merged"}
# ``.write(`` receivers in ui/ that are files (saving the log), not a Log/RichLog widget.
FILES = {"fh", "os"}


def _is_literal(node: ast.expr | None) -> bool:
    """A str constant, None, a conditional of those, or ``Content(<literal>)``."""
    if node is None or (isinstance(node, ast.Constant) and isinstance(node.value, str | None)):
        return True
    if isinstance(node, ast.IfExp):
        return _is_literal(node.body) and _is_literal(node.orelse)
    if isinstance(node, ast.Call) and ast.unparse(node.func) in ("Content", "Inert"):
        return len(node.args) == 1 and not node.keywords and _is_literal(node.args[0])
    return False


def _is_clean(node: ast.expr | None) -> bool:
    """A literal, or the result of the sanitizer (or of a sink's check)."""
    return _is_literal(node) or (isinstance(node, ast.Call)
                                 and ast.unparse(node.func).rpartition(".")[2] in CLEANERS)


def _stream_names(tree: ast.AST) -> set[str]:
    """Names the module annotates as a text stream (parameters and annotated assignments)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        ann: ast.expr | None = None
        name = ""
        if isinstance(node, ast.arg):
            ann, name = node.annotation, node.arg
        elif isinstance(node, ast.AnnAssign):
            ann, name = node.annotation, ast.unparse(node.target).removeprefix("self.")
        if ann is not None and name not in NOT_TERMINAL and _is_text_stream(ann):
            names.add(name)
    return names


def _is_text_stream(ann: ast.expr) -> bool:
    """``TextIO`` (or ``typing.TextIO``, ``io.TextIOBase``...), ``IO[str]``, in any union."""
    for n in ast.walk(ann):
        if isinstance(n, ast.Name | ast.Attribute) and \
                (n.id if isinstance(n, ast.Name) else n.attr) in STREAM_TYPES:
            return True
        if isinstance(n, ast.Subscript) and ast.unparse(n.value).endswith("IO") and \
                ast.unparse(n.slice) == "str":
            return True
    return False


def violations(rel: str, source: str) -> list[str]:
    """``"path:line: what"`` for each terminal write in ``source`` that bypasses the sinks."""
    if rel in SINKS or any(rel.startswith(p) if p.endswith("/") else rel == p for p in EXEMPT):
        return []
    tree = ast.parse(source)
    in_ui = rel.startswith("ui/")
    streams = _stream_names(tree)
    found: list[str] = []

    def bad(node: ast.AST, what: str) -> None:
        found.append(f"{rel}:{getattr(node, 'lineno', 0)}: {what}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = ast.unparse(func)
            if name == "json.dump" and len(node.args) > 1 and any(
                    k.arg == "ensure_ascii" and not (isinstance(k.value, ast.Constant)
                                                     and k.value.value is True)
                    for k in node.keywords):
                target = ast.unparse(node.args[1])
                if target in STREAMS or target.removeprefix("self.") in streams:
                    bad(node, "json.dump(..., ensure_ascii=False) to a terminal (use inert_json)")
            elif name == "print":
                bad(node, "print() (use console.say / console.warn)")
            elif name == "Inert" and not (len(node.args) == 1 and _is_literal(node.args[0])):
                bad(node, "Inert(...) of a non-literal (use inert())")
            elif name in ("Static", "Label", "textual.widgets.Static") and node.args \
                    and not _is_literal(node.args[0]):
                bad(node, f"{name}(...) of a non-literal (use ui.sinks.static)")
            elif in_ui and name.rpartition(".")[2] in TEXT_WIDGETS and (
                    (node.args and not _is_clean(node.args[0])) or any(
                        k.arg in TEXT_KEYWORDS and not _is_clean(k.value)
                        for k in node.keywords)):
                bad(node, f"{name}(...) with a non-literal text (use ui.sinks)")
            elif isinstance(func, ast.Attribute):
                recv = ast.unparse(func.value)
                if func.attr in ("write", "writelines") and (
                        recv in STREAMS or recv.removeprefix("self.") in streams):
                    bad(node, f"{recv}.{func.attr}() (use console.say / console.warn)")
                elif func.attr in WIDGET_CALLS:
                    bad(node, f".{func.attr}() (use ui.sinks)")
                elif in_ui and func.attr == "update" and recv not in NOT_WIDGETS:
                    bad(node, f"{recv}.update() on a widget (use ui.sinks.show)")
                elif in_ui and func.attr in ("write", "write_lines") and recv not in FILES:
                    bad(node, f"{recv}.{func.attr}() on a widget (a Log: use ui.sinks)")
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Attribute) and t.attr in TITLES and (
                        isinstance(node, ast.AugAssign) or not _is_literal(node.value)):
                    bad(node, f".{t.attr} = non-literal (use ui.sinks.set_{t.attr})")
                elif in_ui and isinstance(t, ast.Attribute) and t.attr in INPUT_TEXTS and (
                        isinstance(node, ast.AugAssign) or not _is_clean(node.value)):
                    bad(node, f".{t.attr} = non-literal on a widget (use ui.sinks)")
        elif in_ui and isinstance(node, ast.FunctionDef) and node.name == "render":
            calls = {ast.unparse(c.func) for c in ast.walk(node) if isinstance(c, ast.Call)}
            if not calls & {"checked", "checked_text"}:
                bad(node, "render() without ui.sinks.checked")
    return found


def test_no_terminal_sink_bypasses_the_one_text_type() -> None:
    found: list[str] = []
    files = sorted(ROOT.rglob("*.py"))
    assert len(files) > 150  # (the package is where we think it is)
    for path in files:
        rel = path.relative_to(ROOT).as_posix()
        found += violations(rel, path.read_text(encoding="utf-8"))
    assert not found, "terminal writes that bypass the sinks:\n" + "\n".join(found)


# One deliberate violation per rule: (module path, source)
VIOLATIONS = [
    ("commands/x.py", "print('hi')\n"),
    ("commands/x.py", "import sys\nsys.stdout.write(name)\n"),
    ("report/x.py", "import sys\nsys.__stderr__.write(name)\n"),
    ("headless/x.py", "def f(out: TextIO) -> None:\n    out.write(name)\n"),
    ("headless/x.py", "class P:\n    def __init__(self, out: IO[str]):\n        self.out = out\n"
                      "    def f(self):\n        self.out.writelines([name])\n"),
    ("ui/x.py", "self.notify(message, markup=False)\n"),
    ("ui/x.py", "self.app.notify('literal')\n"),
    ("ui/x.py", "table.add_row(label, key=label)\n"),
    ("ui/x.py", "table.update_cell(row, col, label)\n"),
    ("ui/x.py", "self.query_one(Static).update(label)\n"),
    ("ui/x.py", "status.update(Content(label))\n"),
    ("ui/x.py", "self.border_title = label\n"),
    ("ui/x.py", "self.app.sub_title = f'{path}'\n"),
    ("ui/x.py", "self.tooltip = Content(error)\n"),
    ("ui/x.py", "yield Static(label)\n"),
    ("ui/x.py", "self.query_one(RichLog).write(line)\n"),
    ("ui/x.py", "yield Label(Content(label))\n"),
    ("ui/x.py", "class W:\n    def render(self):\n        return Content(self.label)\n"),
    ("model/x.py", "Inert(label)\n"),
    ("commands/x.py", "def f(out: TextIO):\n    json.dump(v, out, ensure_ascii=False)\n"),
    ("commands/stopper.py", "print(x)\n"),
    ("ui/x.py", "yield Input(self.command, id='edit')\n"),
    ("ui/x.py", "yield Input(placeholder=f'{path}')\n"),
    ("ui/x.py", "yield textual.widgets.TextArea(log_text)\n"),
    ("ui/x.py", "Tab(run.name, id='t')\n"),
    ("ui/x.py", "Button(label=name)\n"),
    ("ui/x.py", "box.value = record.command\n"),
    ("ui/x.py", "self.input.placeholder += name\n"),
]


@pytest.mark.parametrize(("rel", "source"), VIOLATIONS, ids=[s for _, s in VIOLATIONS])
def test_the_scanner_catches_a_deliberate_violation(rel: str, source: str) -> None:
    assert len(violations(rel, source)) == 1


ALLOWED = [
    ("ui/x.py", "self.border_title = 'Log'\nyield Static('connecting…')\n"
                "yield Static(Content('a · b'), id='x')\nx = Inert('a') if y else Inert('b')\n"),
    ("ui/x.py", "class W:\n    def render(self):\n        return checked(Content(self.label))\n"),
    ("ui/x.py", "self.history.update(state.gpus, samples)\n"),
    ("ui/x.py", "yield Input(placeholder='model or host', id='f')\nbox.value = ''\n"
                "yield line_input(inert(command), id='edit')\nTab(inert(title), id='t')\n"),
    ("transport/x.py", "link = Link(conn, dest)\n"),
    ("commands/x.py", "fh.write(line)\nsay(inert(x), out)\nrec.update(x)\n"
                      "json.dump(v, sys.stdout)\njson.dump(v, fh, ensure_ascii=False)\n"),
    ("sim/x.py", "print('\\x1b]0;hostile on purpose\\x07')\n"),
]


@pytest.mark.parametrize(("rel", "source"), ALLOWED, ids=[s for _, s in ALLOWED])
def test_what_the_sinks_allow_is_not_reported(rel: str, source: str) -> None:
    assert violations(rel, source) == []


HOSTILE = "id\x1b]0;PWNED\x07\x1b[2J\x9b1;1H\x9d2;x\x9c\u202eend"


def test_the_sinks_check_again_at_run_time(capsys: pytest.CaptureFixture[str]) -> None:
    """The type is a promise mypy keeps; a cast that lies is still cleaned at the sink."""
    import io
    from typing import cast

    from rich.text import Text
    from textual.content import Content

    from eagle_tui.console import say, warn
    from eagle_tui.headless.streams import safe_streams
    from eagle_tui.model.boundary.termtext import Inert, is_inert
    from eagle_tui.ui.sinks import checked, checked_text

    buf = io.StringIO()
    say(cast(Inert, HOSTILE), buf)
    warn(cast(Inert, HOSTILE), buf)
    assert is_inert(buf.getvalue(), newlines=True) and "PWNED" not in buf.getvalue()
    assert is_inert(checked(Content.assemble((HOSTILE, "bold"), "x")).plain)
    assert is_inert(checked(cast(Inert, HOSTILE)).plain)
    assert is_inert(checked_text(Text(HOSTILE, style="bold")).plain)
    with safe_streams():  # what a library or argparse prints is cleaned too
        print(HOSTILE)
        print(HOSTILE, file=sys.stderr)
    out, err = capsys.readouterr()
    assert "\x1b" not in out + err and "PWNED" not in out + err and out.startswith("id")
