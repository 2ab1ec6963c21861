"""One error boundary (issue 17, item 5): encoding-safe output on any locale, file names echoed
inert, one line and the documented exit code for every error, the crash diagnosis bounded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from eagle_tui.cli import main
from eagle_tui.errors import EXIT_INTERNAL

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "eagle_tui" / "data" / "sample-sglang-eagle3.log"
OSC_NAME = "run\x1b]0;pwned\x07\x1b[2J.log"


def _eagle(*args: str, encoding: str = "utf-8",
           timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": encoding,
           "LC_ALL": "C", "PYTHONUTF8": "0"}
    return subprocess.run([sys.executable, "-m", "eagle_tui", *args], cwd=ROOT, env=env,
                          capture_output=True, timeout=timeout, check=False)


def _bad_log(tmp_path: Path, name: str = "bad.log") -> Path:
    """A crashing SGLang log whose lines hold bytes that are not UTF-8 (shown as U+FFFD)."""
    log = tmp_path / name
    text = SAMPLE.read_bytes().split(b"\n")[:20]
    text += [b"bad bytes \xff\xfe here", b"Traceback (most recent call last):",
             b'  File "x.py", line 1, in <module>',
             b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB \xff"]
    log.write_bytes(b"\n".join(text) + b"\n")
    return log


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_non_utf8_stdout_never_raises(tmp_path: Path, encoding: str) -> None:
    """U+FFFD from the sanitizer raised UnicodeEncodeError in report, wait (exit 1) and
    headless watch on a stdout that cannot encode it."""
    log = _bad_log(tmp_path)
    report = _eagle("report", str(log), encoding=encoding)
    assert report.returncode == 0 and b"Traceback" not in report.stderr, report.stderr
    wait = _eagle("wait", "--log", str(log), "--timeout", "5", encoding=encoding)
    assert wait.returncode == 1 and b"CRASHED" in wait.stdout, wait.stderr  # the log's crash
    assert b"UnicodeEncodeError" not in wait.stderr + wait.stdout
    watch = _eagle("watch", "--headless", "--log", str(log), "--duration", "1",
                   encoding=encoding)
    assert watch.returncode == 0 and b"Traceback" not in watch.stderr, watch.stderr


def test_file_names_are_echoed_inert(tmp_path: Path) -> None:
    """``report`` on a file named with an OSC sequence retitled the terminal."""
    log = tmp_path / OSC_NAME
    log.write_bytes(SAMPLE.read_bytes())
    out = _eagle("report", str(log))
    assert out.returncode == 0
    assert b"\x1b" not in out.stdout and b"\x07" not in out.stdout
    missing = _eagle("report", str(tmp_path / ("gone" + OSC_NAME)))
    assert missing.returncode == 2 and b"\x1b" not in missing.stderr
    assert missing.stderr.count(b"\n") == 1
    waited = _eagle("wait", "--log", str(tmp_path), "--url", "x:::", "--timeout", "1")
    assert waited.returncode == 2 and b"\x1b" not in waited.stderr


NL_NAME = "no\nsuch\x1b[31m.json"  # a newline and an escape in a file name


@pytest.mark.parametrize("args", [
    ["replay", "--headless", NL_NAME],
    ["report", "--bench-results", NL_NAME, str(SAMPLE)],
    ["replay", "--headless", "--config", NL_NAME, str(SAMPLE)],
    ["lint", "--compose", NL_NAME],
    ["fleet", "--prometheus", "http://127.0.0.1:9", "--ssh-map", NL_NAME, "--count", "1"],
    ["watch", "--headless", "--duration", "1", "--log", str(SAMPLE), "--gpu", "none",
     "--record", "/proc/1/x\n.rec"],
], ids=["replay", "bench-results", "config", "compose", "ssh-map", "record"])
def test_a_refusal_is_one_line_whatever_the_name_holds(args: list[str],
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Every command's refusal goes through ``console.fail``: a newline in a quoted file name
    printed the refusal on two lines."""
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ": error: " in err, err
    assert "\x1b" not in err


def test_an_error_caused_by_ctrl_c_is_130_and_quiet(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Ctrl-C inside a class body being built at import (``__set_name__``) comes out as a
    ``RuntimeError`` caused by the KeyboardInterrupt: it was a traceback and exit 1 (outside
    the command) or "internal error", exit 70 (inside)."""
    import argparse

    from eagle_tui import cli

    def boom(args: object) -> int:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as exc:
            raise RuntimeError("Error calling __set_name__") from exc

    real = argparse.ArgumentParser.parse_args

    def parse(self: argparse.ArgumentParser, *a: object, **k: object) -> argparse.Namespace:
        ns = real(self, *a, **k)  # type: ignore[arg-type]
        ns.func = boom
        return ns

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse)
    hook = sys.unraisablehook
    try:
        assert main(["wait", "--log", "/nonexistent.log", "--timeout", "1"]) == 130
        monkeypatch.setattr(cli, "build_parser", lambda first: boom(None))
        assert main(["wait", "--log", "/nonexistent.log", "--timeout", "1"]) == 130
    finally:
        sys.unraisablehook = hook
    assert capsys.readouterr().err == ""


def test_an_internal_error_is_one_line_and_exit_70(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A bug of eagle-tui is never exit 1 (``wait``'s "crashed")."""
    from eagle_tui.commands import wait

    def boom(args: object) -> int:
        raise TypeError("a bug \x1b]0;x\x07 here")

    monkeypatch.setattr(wait, "run", boom)
    monkeypatch.delenv("EAGLE_TUI_DEBUG", raising=False)
    import argparse

    real = argparse.ArgumentParser.parse_args

    def parse(self: argparse.ArgumentParser, *a: object, **k: object) -> argparse.Namespace:
        ns = real(self, *a, **k)  # type: ignore[arg-type]
        if getattr(ns, "command", None) == "wait":
            ns.func = boom
        return ns

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse)
    assert main(["wait", "--log", "/nonexistent.log", "--timeout", "1"]) == EXIT_INTERNAL
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error" in err and "TypeError" in err
    assert "\x1b" not in err and "\x07" not in err


def test_crash_diagnosis_lines_are_cut(tmp_path: Path) -> None:
    """The diagnosis printed its last 20 lines whole: 20 MB from a /dev/zero-like log."""
    log = tmp_path / "long.log"
    lines = SAMPLE.read_bytes().split(b"\n")[:20]
    lines += [b"x" * 200_000 for _ in range(20)]
    lines += [b"Traceback (most recent call last):",
              b"torch.OutOfMemoryError: CUDA out of memory. " + b"y" * 200_000]
    log.write_bytes(b"\n".join(lines) + b"\n")
    out = _eagle("wait", "--log", str(log), "--timeout", "20")  # (the crash ends it sooner)
    assert out.returncode in (1, 3), out.stderr  # crashed or timed out: both print the lines
    assert len(out.stdout) < 40_000, len(out.stdout)
    assert b"more characters]" in out.stdout
    js = _eagle("wait", "--log", str(log), "--timeout", "20", "--json")
    result = json.loads(js.stdout.splitlines()[-1])
    assert all(len(ln["text"]) < 600 for ln in result["last_lines"])
