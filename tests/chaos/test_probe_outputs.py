"""The probe of new output shapes: what leaves eagle-tui, with shapes the first round never named.

The relaunch editor's input line showed the run's command as ``shlex.quote`` wrote it, control
characters and all: Textual draws an ``Input``'s text as it is, so an ESC in a model path
retitled the terminal and cleared it (and the AST scan of sinks knew only ``Static``/``Label``).
The mechanism: commands are quoted by ``model.shellwords`` (controls spelled as ANSI-C escapes,
read back by the same module's splitter), every text widget is a sink the scan knows, and the
editor's lines (a ``TextArea`` now, one argument a line) are each quoted so. Proven here with
generated words: the quoting is inert and lossless, real ``bash`` reads it as we do, and the
editor shows and submits it intact.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from eagle_tui.model.boundary.shellwords import join, quote, split
from eagle_tui.model.boundary.termtext import is_inert
from eagle_tui.model.launching.cmdline import split_command
from eagle_tui.model.launching.redact import redact_text

# Controls a terminal acts on (7- and 8-bit), bidi overrides, line separators, surrogates from
# undecodable bytes, and the characters that matter to a shell's quoting.
NASTY = list("\x1b\x9b\x9d\x07\x9c\x00\x7f\n\r\t\u2028\u202e\u2066\udc9b\udcff'\"\\$#` ;*~")
CHARS = st.one_of(st.characters(), st.characters(codec="utf-8"), st.sampled_from(NASTY))
WORDS = st.lists(st.text(CHARS, max_size=24), max_size=8)
PAYLOAD = "/models/m\x1b]0;PWNED\x07\x1b[2J\x9b2J\x1b]2;X\x1b\\\u202e\udc9b"


@given(WORDS)
@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
def test_quoting_is_inert_and_lossless(words: list[str]) -> None:
    line = join(words)
    assert is_inert(line) and not any("\ud800" <= c <= "\udfff" for c in line)
    assert split(line) == words
    assert split_command(line) == words


@given(st.lists(st.text(st.characters(blacklist_characters="$"), max_size=16), max_size=6))
@settings(max_examples=200)
def test_text_without_ansi_quotes_splits_as_shlex(words: list[str]) -> None:
    """Anything a user pasted before (no ``$'``) splits exactly as it did."""
    line = shlex.join(words)
    assert split(line) == shlex.split(line, comments=True)


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash not installed")
@given(st.lists(st.text(st.one_of(st.characters(blacklist_categories=("Cs",),
                                                blacklist_characters="\x00"),
                                  st.sampled_from([c for c in NASTY if c != "\x00"])),
                        max_size=12), min_size=1, max_size=4))
@settings(max_examples=25, deadline=None)
def test_bash_reads_the_quoting_as_we_do(words: list[str]) -> None:
    """The ANSI-C form is the shell's own: a user who copies the line into bash runs the same
    words (printf prints each between NUL bytes; an undecodable byte is that byte again)."""
    out = subprocess.run(["bash", "--norc", "-c", f"printf '%s\\0' {join(words)}"],
                         capture_output=True, timeout=10, check=True,
                         env={"PATH": os.environ.get("PATH", ""), "LC_ALL": "C.UTF-8"}).stdout
    assert out.split(b"\0")[:-1] == [w.encode("utf-8", "surrogateescape") for w in words]


def test_the_examples() -> None:
    assert quote("plain/path") == "plain/path" and quote("a b") == "'a b'"
    assert quote("m\x1b]0;X\x07") == "$'m\\e]0;X\\x07'"
    assert quote("\u202eevil") == "$'\\u202eevil'"
    assert split("a $'b\\x1bc' 'd e' # comment") == ["a", "b\x1bc", "d e"]
    assert split("$'\\u202e'\"x\"y") == ["\u202exy"]
    for bad in ("$'open", "'open", '"open', "x\\"):
        with pytest.raises(ValueError):
            split(bad)
    # redaction keeps the form: the secret masked, the escape spelled
    assert redact_text(join(["x", "--api-key", "sk-1", f"--model-path={PAYLOAD}"])) == join(
        ["x", "--api-key", "***", f"--model-path={PAYLOAD}"])


async def test_the_relaunch_editor_shows_and_submits_the_command_intact() -> None:
    """The editor's lines hold nothing a terminal acts on, and Enter sends back the same words."""
    from textual.app import App, ComposeResult
    from textual.widgets import Static, TextArea

    from eagle_tui.model.launching.control import Relaunch
    from eagle_tui.ui.control import EditScreen

    argv = ["python", "-m", "sglang.launch_server", "--model-path", PAYLOAD, "--port", "30000"]
    sent: list[Relaunch] = []

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield Static("host")

        def on_mount(self) -> None:
            self.push_screen(EditScreen(f"run{PAYLOAD}", join(argv), sent.append))

    app = Host()
    async with app.run_test() as pilot:
        await pilot.pause()
        box = app.screen.query_one("#edit-command", TextArea)
        assert is_inert(box.text, newlines=True) and "PWNED" in box.text  # spelled, not acted on
        assert is_inert(str(app.screen.query_one(".control-box").border_title))
        await pilot.press("enter")
        await pilot.pause()
    assert [split_command(r.command) for r in sent] == [argv]


# ----------------------------------------------------------------- a history edited by hand
# SQLite keeps any value in any column. The history is a file another version, a script or a
# person may have written: every printing command reads it and must neither crash (exit 70) nor
# print what a terminal acts on, and ``--json`` stays one valid JSON document.
SQL_VALUES = st.one_of(
    st.none(), st.integers(min_value=-(2**63), max_value=2**63 - 1), st.booleans(),
    st.floats(allow_nan=False), st.binary(max_size=8),
    st.text(CHARS.filter(lambda c: not "\ud800" <= c <= "\udfff"), max_size=12),
    st.sampled_from([PAYLOAD.replace("\udc9b", ""), "[1, 2]", '{"a": [1]}', '"s"', "[]", "{}",
                     '{"x": "y"}', '["a", 1]', "NaN", "1e999", "-1", "0"]))
EDITABLE = ("name", "kind", "engine", "host", "command", "argv", "flags", "env_names", "cwd",
            "started", "ended", "state", "log_path", "url", "pid", "pgid", "proc_start", "token",
            "parent", "phases", "ready_s", "crash", "metrics", "windows", "baseline", "notes")


@given(st.fixed_dictionaries({}, optional={c: SQL_VALUES for c in EDITABLE}))
@example({"started": 7e16, "ended": -1e11, "ready_s": 1e300, "baseline": -1e300})
@example({"pid": "abc", "pgid": 2**63 - 1, "host": 123, "argv": '{"a": 1}', "flags": "[1, 2]"})
@example({"name": b"\xff\x1b]0;X\x07", "phases": '{"load": 1e300, "x": -5}',
          "metrics": '{"tok_s_median": 1e308, "accept_len": "x", "speedup": [1]}',
          "windows": '[{"start": "x", "end": null, "tok_s": 1e308}, 1, "w"]',
          "crash": '{"kind": 5, "hint": ["x"], "line": {"a": 1}}'})
@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
def test_a_hand_edited_history_prints_safely(tmp_path_factory: pytest.TempPathFactory,
                                            row: dict[str, object]) -> None:
    import contextlib
    import io
    import json
    import sqlite3

    from eagle_tui.cli import main
    from eagle_tui.errors import EXIT_INTERNAL
    from eagle_tui.history.store import RunStore

    folder = tmp_path_factory.mktemp("history")
    store = RunStore(folder / "runs.sqlite3")
    store.add(engine="sglang", name="good", started=1.0, state="ready",
              argv=["python", "-m", "sglang.launch_server", "--model-path", "m"])
    required = {"started": 2.0, "state": "ready", "kind": "launched", "host": ""}  # NOT NULL
    cols = {**required, **{k: v for k, v in row.items() if v is not None or k not in required}}
    db = sqlite3.connect(store.path)
    db.execute(f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
               tuple(cols.values()))
    db.commit()
    db.close()
    mp = pytest.MonkeyPatch()
    mp.setenv("EAGLE_TUI_DATA_DIR", str(folder))
    try:
        for argv in (["runs", "list"], ["runs", "show", "2"], ["runs", "compare", "1", "2"]):
            for extra in ([], ["--json"]):
                out, err = io.StringIO(), io.StringIO()
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    code = main([*argv, *extra])
                assert code != EXIT_INTERNAL, (argv, extra, row, err.getvalue())
                for text in (out.getvalue(), err.getvalue()):
                    assert is_inert(text, newlines=True), (argv, text)
                if extra and code == 0:  # (strict: no NaN or Infinity either)
                    json.loads(out.getvalue(), parse_constant=_refuse)
    finally:
        mp.undo()


def _refuse(word: str) -> None:
    raise ValueError(f"not JSON: {word}")


# ------------------------------------------------------------ undecodable bytes (surrogates)
# An argv or a file name that is not UTF-8 reaches Python as ``surrogateescape`` text
# (U+DC80-U+DCFF). It cannot be encoded for a terminal nor stored as SQLite text: ``launch
# --name $'n\xff'`` and ``--log $'/tmp/\xff.log'`` exited 70, and a ``surrogateescape`` stream
# wrote a 0x9b byte (the 8-bit CSI) where the text held U+DC9B.
TEXTS = st.text(st.one_of(st.characters(codec=None), st.sampled_from(NASTY)), max_size=40)


@given(TEXTS)
@settings(max_examples=300)
def test_inert_text_always_encodes(text: str) -> None:
    from eagle_tui.model.boundary.termtext import inert, inert_json

    for newlines in (False, True):
        shown = inert(text, newlines=newlines)
        assert shown.encode("utf-8") is not None and inert(shown, newlines=newlines) == shown
    doc = inert_json({"v": text})
    assert doc.encode("utf-8") is not None and is_inert(doc)
    assert __import__("json").loads(doc) == {"v": text}  # (lossless: escaped, not dropped)


@given(st.text(st.one_of(st.characters(codec=None), st.sampled_from(NASTY)), min_size=1,
               max_size=16))
@example("\udcff\x1b]0;X\x07 \udc9b")
@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_the_history_keeps_any_name_and_path(tmp_path_factory: pytest.TempPathFactory,
                                             text: str) -> None:
    from eagle_tui.history.store import RunStore

    store = RunStore(tmp_path_factory.mktemp("h") / "runs.sqlite3")
    run = store.add(engine="sglang", name=f"n{text}x", log_path=f"/logs/{text}.log",
                    cwd=text, host="h", notes=text)
    again = store.get(f"n{text}x")
    assert again.id == run.id and again.log_path == f"/logs/{text}.log"
    assert (again.cwd, again.notes) == (text, text)


def test_a_name_that_is_not_utf8_is_a_run_like_any_other(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsysbinary: pytest.CaptureFixture[bytes]
                                                         ) -> None:
    """In-process through ``cli.main`` with the argv Python makes of the bytes ``\\xff \\x9b``."""
    from eagle_tui.cli import main
    from eagle_tui.history.store import RunStore

    monkeypatch.setenv("EAGLE_TUI_DATA_DIR", str(tmp_path))
    RunStore(tmp_path / "runs.sqlite3").add(engine="sglang", name="n\udcff", state="ready")
    assert main(["runs", "note", "n\udcff", "ok\udc9b2J\udcff"]) == 0
    assert main(["runs", "show", "n\udcff"]) == 0
    assert main(["runs", "list", "--json"]) == 0
    out = capsysbinary.readouterr().out
    assert b"\x9b" not in out and b"\x1b" not in out and b"ok\xef\xbf\xbd2J" in out
    assert b'"notes": "ok\\udc9b2J\\udcff"' in out  # JSON keeps the value, escaped


# ------------------------------------------------------------------ end to end, in tmux
# The editor (its TextArea) and the history's printing commands in a real terminal: afterwards the
# pane title is the one tmux gave, BEFORE is still on screen, the payload's words are nowhere.
EDITOR_APP = """
import sys
from textual.app import App
from textual.widgets import Static
from eagle_tui.model.boundary.shellwords import join
from eagle_tui.ui.control import EditScreen
P = {payload!r}
class Host(App):
    def compose(self):
        yield Static("host")
    def on_mount(self):
        argv = ["python", "-m", "sglang.launch_server", "--model-path", P]
        self.push_screen(EditScreen("run" + P, join(argv), lambda r: None))
Host().run()
"""


@pytest.mark.tmux
@pytest.mark.slow
def test_editor_and_history_in_a_real_terminal(tmp_path: Path) -> None:
    import sys
    import time
    import uuid

    from eagle_tui.history.store import RunStore

    tmux = shutil.which("tmux")
    if tmux is None:
        pytest.skip("tmux not installed")
    data = tmp_path / "data"
    RunStore(data / "runs.sqlite3").add(engine="sglang", name=f"n{PAYLOAD}", notes=PAYLOAD,
                                        log_path=f"/l{PAYLOAD}", host=f"h{PAYLOAD}")
    (tmp_path / "editor.py").write_text(EDITOR_APP.format(payload=PAYLOAD),
                                        encoding="utf-8", errors="surrogateescape")
    sock = f"eagle-probe-{uuid.uuid4().hex[:8]}"

    def t(*args: str) -> str:
        return subprocess.run([tmux, "-L", sock, *args], check=True, capture_output=True,
                              text=True, timeout=10).stdout

    eagle = f"env -u COLUMNS -u LINES EAGLE_TUI_DATA_DIR={shlex.quote(str(data))} {sys.executable}"
    windows = {"runs": f"{eagle} -m eagle_tui runs show 1; {eagle} -m eagle_tui runs list",
               "editor": f"{eagle} {shlex.quote(str(tmp_path / 'editor.py'))}"}
    t("new-session", "-d", "-s", "s", "-x", "160", "-y", "40", "sleep 300")
    try:
        title0 = t("display", "-p", "-t", "s:0", "#{pane_title}").strip()
        for name, command in windows.items():
            t("new-window", "-d", "-n", name,
              f"printf 'BEFORE\\n'; {command}; printf '\\nDONE rc=%s\\n' $?; sleep 300")

        def wait(name: str, word: str) -> str:
            end = time.monotonic() + 40
            while word not in (text := t("capture-pane", "-p", "-t", f"s:{name}")):
                assert time.monotonic() < end, (name, text)
                time.sleep(0.2)
            return text

        editor = wait("editor", "relaunch")
        assert "PWNED" in editor and "\\e]0;PWNED" in editor  # spelled in the input line
        assert t("display", "-p", "-t", "s:editor", "#{alternate_on}").strip() == "1"
        t("send-keys", "-t", "s:editor", "C-q")
        screens = {"runs": wait("runs", "DONE rc="), "editor": wait("editor", "DONE rc=")}
        for name, text in screens.items():
            assert t("display", "-p", "-t", f"s:{name}", "#{pane_title}").strip() == title0
            assert "BEFORE" in text and "DONE rc=0" in text, (name, text)
        assert "PWNED" not in screens["runs"] and "notes:" in screens["runs"]
    finally:
        subprocess.run([tmux, "-L", sock, "kill-server"], capture_output=True, timeout=10,
                       check=False)


# --------------------------------------------------------- a history's host is outside input
# ``stop RUN`` and ``attach RUN`` connect to the host the run records. The history is a file: a
# host written into it reached paramiko's config lookup as if typed, so a ``Match exec`` line of
# the user's own SSH config ran a shell with it substituted for ``%h`` (a marker file appeared).
# Now it passes the grammar gate and the lookup runs no ``Match exec``, as a fleet label's.
SHELLY = st.builds(lambda a, b: f"{a};touch${{IFS}}{{marker}};{b}", st.text("abc.-", max_size=4),
                   st.text("xyz", max_size=3)) | st.sampled_from(
    ["$(touch {marker})", "`touch {marker}`", "h|touch {marker}", "-oProxyCommand=touch {marker}",
     "h\ntouch {marker}", "h&&touch {marker}", "h'\"; touch {marker}"])


@given(SHELLY, st.booleans())
@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_a_recorded_host_never_reaches_a_shell(tmp_path_factory: pytest.TempPathFactory,
                                               shape: str, stop: bool) -> None:
    import contextlib
    import io

    from eagle_tui.cli import main
    from eagle_tui.history.store import RunStore

    folder = tmp_path_factory.mktemp("hosts")
    marker = folder / "MARK"
    config = folder / "ssh_config"
    config.write_text(f'Match exec "touch {folder}/MATCHED_%h"\n    User nobody\n'
                      "Host *\n    ConnectTimeout 2\n    Hostname 127.0.0.1\n    Port 9\n")
    RunStore(folder / "runs.sqlite3").add(engine="sglang", name="r", state="ready",
                                          host=shape.replace("{marker}", str(marker)),
                                          token="0123456789abcdef0123456789abcdef",
                                          log_path=str(folder / "x.log"))
    mp = pytest.MonkeyPatch()
    mp.setenv("EAGLE_TUI_DATA_DIR", str(folder))
    argv = ["stop", "r", "--yes"] if stop else ["attach", "r", "--headless", "--duration", "1"]
    try:
        with contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(err := io.StringIO()):
            code = main([*argv, "--ssh-config", str(config)])
    finally:
        mp.undo()
    assert code == 2 and "refused" in err.getvalue(), err.getvalue()
    assert not marker.exists() and not list(folder.glob("MATCHED_*"))
