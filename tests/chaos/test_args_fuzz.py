"""The internal-error fuzz: no argument vector makes any subcommand exit 70 (an eagle-tui bug).

For every subcommand, hypothesis builds argument vectors from the subcommand's own parser
(its options and positionals, read off argparse): hostile values (numbers at the edges, 21
digits, negative, ``nan``/``inf``/``1e999``, empty, unicode, terminal escapes), options missing
their value, unknown flags, and paths that do not exist, are directories, empty or junk files.
Each vector runs IN-PROCESS through ``eagle_tui.cli.main`` with stdin empty, no TTY, the test's
own data folders (the root conftest), a folder of its own as the working directory and a
timeout guard; the outcome must be an exit code
other than 70 and no exception out of ``main``.

Bounds that keep it to seconds: a command that would run on (``watch``, ``wait``, ``attach``,
``bench``, ``fleet``) gets a short ``--duration``/``--timeout``/``--count`` appended (the last
occurrence wins; the fuzzed one is still parsed and checked); every URL is a closed loopback
port; ``launch`` and ``demo``, which start processes and servers, are fuzzed up to the end of
their argument parsing. Excluded, with their owner: the SSH options (``--ssh``, ``--identity``,
``--known-hosts``, ``--ssh-config``, ``--ssh-map``: they connect out; i21-ssh) and FIFOs or
devices as paths (non-regular files; i22-files). NUL is never in a value: a real argv cannot
hold one.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eagle_tui.cli import COMMANDS, build_parser, main
from eagle_tui.errors import EXIT_INTERNAL

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "eagle_tui" / "data" / "sample-sglang-eagle3.log"
FILES = Path("/nonexistent")  # the module's folder of odd files, made by ``_files``
CLOSED = "http://127.0.0.1:9"
SSH = {"--ssh", "--identity", "--known-hosts", "--ssh-config", "--ssh-map",
       "--accept-new-host-key"}
# the slice owners' shapes: see the module docstring
PARSE_ONLY = {"launch", "demo"}
# a log to watch unless the vector names another (the last --log wins): without one, these
# commands look for servers on the machine and stop at "N servers found"
PREFIX = {c: ["--log", str(SAMPLE)] for c in ("watch", "wait")}
BOUNDED_TAIL = {
    "watch": ["--headless", "--duration", "0.2"],
    "wait": ["--timeout", "0.2"],
    "attach": ["--headless", "--duration", "0.2"],
    "bench": ["--url", CLOSED, "--timeout", "0.3", "--requests", "1"],
    "fleet": ["--headless", "--prometheus", CLOSED, "--count", "1", "--timeout", "0.3"],
}
NUMBERS = ["0", "-0", "1", "-1", "2", "0.5", "1.5", "65535", "65536", "2147483647",
           "9223372036854775807", "9223372036854775808", "9" * 21, "-" + "9" * 21, "1e999",
           "-1e999", "1e-999", "nan", "inf", "-inf", "0x10", "1_0", "1e3", " 7 ", "+3", "١"]
TEXT = ["", " ", "-", "--", "é", "日本語", "\x1b[2J\x1b]0;pwned\x07", "[bold]x[/]", "a" * 300,
        "last", "last~1", "last~99999999999999999999", "last~-1", "last~nan", "%s%n", "..",
        "K=V", "=", "(a+)+$", "{}", '{"num_speculative_tokens": 99999999999999999999}']
URLS = [CLOSED, "http://127.0.0.1:99999", "http://127.0.0.1:0", "ftp://127.0.0.1:9", "127.0.0.1",
        "http://[::1]:9", "http://127.0.0.1:9/%00", "http://", "http://:9"]
UNKNOWN = ["--bogus", "-x", "--json=1", "--", "-h"]
LINT_WORDS = ["python", "-m", "sglang.launch_server", "vllm", "serve", "--speculative-algorithm",
              "EAGLE3", "--speculative-num-steps", "--speculative-eagle-topk", "--tp",
              "--speculative-config", "--model-path", "--port", "--mem-fraction-static"]


def _paths() -> list[str]:
    return [str(FILES / n) for n in ("missing.log", "dir", "empty.log", "junk.log",
                                     "sample.log", "record.jsonl", "bad.toml")] + ["/nonexistent/x"]


@pytest.fixture(scope="module", autouse=True)
def _files(tmp_path_factory: pytest.TempPathFactory) -> None:
    global FILES
    FILES = tmp_path_factory.mktemp("args-fuzz")
    (FILES / "dir").mkdir(exist_ok=True)
    (FILES / "empty.log").write_bytes(b"")
    (FILES / "junk.log").write_bytes(b"\xff\xfe\x00junk\n" * 50 + b"{[(" * 100)
    (FILES / "sample.log").write_bytes(SAMPLE.read_bytes()[:20_000])
    (FILES / "record.jsonl").write_text('{"kind": "header", "version": 99999999999999999999}\n')
    (FILES / "bad.toml").write_text("[ui]\nmax_lines = 1e999\n[[highlight]]\npattern='(?=a)'\n")


@pytest.fixture(autouse=True)
def _history() -> None:
    """One run in this test's own history, so that ``runs``, ``stop`` and ``--baseline-run``
    reach their queries (an empty history answers before any)."""
    assert outcome(["watch", "--log", str(SAMPLE), "--headless", "--duration", "0.2"])[0] == 0


def _parser(command: str) -> argparse.ArgumentParser:
    sub = next(a for a in build_parser(command)._actions
               if isinstance(a, argparse._SubParsersAction))
    parser: argparse.ArgumentParser = sub.choices[command]
    return parser


EDGES = ["9" * 21, "9223372036854775808", "-" + "9" * 21, "2147483648", "1e999", "nan", "-1",
         "0"]
PATHISH = ("log", "file", "path", "config", "record", "cwd", "draft", "results", "map")
PLAUSIBLE = ["1", "2", "3", "0.5", "30s", "5m"]


def _values(action: argparse.Action, hostile: bool) -> st.SearchStrategy[str]:
    """A value for ``action``: plausible for it (so that the command runs on), or hostile."""
    name = "/".join(action.option_strings) + action.dest
    if action.choices:
        plausible = st.sampled_from([str(c) for c in action.choices])
    elif "url" in name or "prometheus" in name:
        plausible = st.sampled_from(URLS[:1])
    elif any(w in name for w in PATHISH) or action.type is Path or not action.option_strings:
        plausible = st.sampled_from(_paths())
    elif action.type is None:
        plausible = st.sampled_from(TEXT[8:12])
    else:
        plausible = st.sampled_from(PLAUSIBLE[:4])
    if not hostile:
        return plausible
    if action.choices or action.type is None or any(w in name for w in PATHISH):
        return st.sampled_from(NUMBERS + TEXT + URLS + _paths() + ["bogus"])
    return st.one_of(st.sampled_from(EDGES), st.sampled_from(NUMBERS + TEXT))


def command_paths() -> list[tuple[str, ...]]:
    """Every subcommand, and each of a subcommand's own (``runs list``, ``runs show`` ...)."""
    paths: list[tuple[str, ...]] = []
    for command in COMMANDS:
        sub = next((a for a in _parser(command)._actions
                    if isinstance(a, argparse._SubParsersAction)), None)
        paths += [(command, name) for name in sub.choices] if sub else [(command,)]
    return paths


@st.composite
def argv_for(draw: st.DrawFn, path: tuple[str, ...]) -> list[str]:
    command = path[0]
    parser = _parser(command)
    for name in path[1:]:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    prefix = list(path)
    actions = [a for a in parser._actions
               if not isinstance(a, argparse._HelpAction | argparse._SubParsersAction)
               and not SSH & set(a.option_strings)]
    argv: list[str] = []
    positionals = [a for a in actions if not a.option_strings and a.nargs != argparse.REMAINDER]
    options = [a for a in actions if a not in positionals]
    chosen = positionals + (draw(st.lists(st.sampled_from(options), max_size=4)) if options
                            else [])
    # most vectors are well formed but for one hostile value, so that it reaches the command;
    # the rest are chaos: any value hostile, values missing, unknown flags
    chaos = draw(st.integers(0, 3)) == 0
    target = draw(st.integers(0, max(0, len(chosen) - 1)))
    for i, action in enumerate(chosen):
        if action.nargs == argparse.REMAINDER:
            argv += ["--", *draw(st.lists(st.sampled_from(LINT_WORDS + NUMBERS + TEXT),
                                          max_size=8))]
            continue
        if action.option_strings:
            argv.append(draw(st.sampled_from(action.option_strings)))
        if action.nargs == 0 or (chaos and draw(st.integers(0, 9)) == 0):  # no value
            continue
        hostile = chaos or i == target
        argv += draw(st.lists(_values(action, hostile), min_size=1,
                              max_size=2 if action.nargs in ("+", "*") else 1))
    if chaos and draw(st.booleans()):
        argv.insert(draw(st.integers(0, len(argv))), draw(st.sampled_from(UNKNOWN)))
    return prefix + PREFIX.get(command, []) + argv + BOUNDED_TAIL.get(command, [])


class _TimedOut(BaseException):
    """Raised by the guard's alarm: a BaseException, so ``main``'s boundary cannot eat it."""


@contextlib.contextmanager
def _guard(seconds: float) -> Iterator[None]:
    def alarm(signum: int, frame: FrameType | None) -> None:
        raise _TimedOut

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _stream() -> io.TextIOWrapper:
    """A text stream over bytes, as a process's are (``report --json`` writes to ``.buffer``)."""
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="replace")


def outcome(argv: list[str]) -> tuple[int | str, str]:
    """(exit code, stderr) of one in-process run; a parse-only command stops after parsing."""
    err, out = _stream(), _stream()
    stdin = sys.stdin
    sys.stdin = _stream()  # empty: ``report -`` reads nothing
    try:
        # in the odd files' folder: a relative ``--record 0`` or ``--log K=V`` lands there
        with _guard(20), contextlib.chdir(FILES), contextlib.redirect_stderr(err), \
                contextlib.redirect_stdout(out):
            try:
                if argv[0] in PARSE_ONLY:
                    build_parser(argv[0]).parse_args(argv)
                    code: int | str = 0
                else:
                    code = main(argv)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 2
    finally:
        sys.stdin = stdin
    err.flush()
    buffer = err.buffer
    assert isinstance(buffer, io.BytesIO)
    return code, buffer.getvalue().decode("utf-8", "replace")


FAST = {"lint", "stop", "runs", "report", "replay", "launch", "demo"}


@pytest.mark.parametrize("path", command_paths(), ids=" ".join)
def test_no_argument_vector_is_an_internal_error(path: tuple[str, ...]) -> None:
    command = path[0]
    seen: list[list[str]] = []
    past_parsing = 0  # vectors argparse took, that the command itself then ran (or refused)

    @settings(max_examples=40 if command in FAST else 12, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(argv_for(path))
    def run(argv: list[str]) -> None:
        nonlocal past_parsing
        seen.append(argv)
        code, err = outcome(argv)
        assert code != EXIT_INTERNAL, (argv, err[-2000:])
        past_parsing += "usage:" not in err

    run()
    assert len(seen) >= 12 and past_parsing >= 2, (len(seen), past_parsing)


SWEEP = [*EDGES, "inf", "0x10", "1_0", "", "１"]


@pytest.mark.parametrize("path", command_paths(), ids=" ".join)
def test_every_number_option_at_its_edges(path: tuple[str, ...]) -> None:
    """The systematic half: each typed option of the subcommand alone with each edge value
    (hypothesis favours small draws; this one misses none)."""
    parser = _parser(path[0])
    for name in path[1:]:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    numeric = [a for a in parser._actions if a.option_strings and a.type not in (None, Path)
               and a.nargs != 0 and not SSH & set(a.option_strings)]
    tried = 0
    for action in numeric:
        for value in SWEEP:
            argv = [*path, *PREFIX.get(path[0], []), action.option_strings[-1], value,
                    *BOUNDED_TAIL.get(path[0], [])]
            code, err = outcome(argv)
            assert code != EXIT_INTERNAL, (argv, err[-2000:])
            tried += 1
    assert tried == len(numeric) * len(SWEEP)
