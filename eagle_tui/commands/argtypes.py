"""Argparse types: every number, duration and size on the command line, bounded and strict.

A value the program cannot use is refused where it enters, by argparse: exit 2 and a one-line
reason (``argument --limit: must be a whole number from 1 to 1,000,000: '1e21'``), never an
overflow deep inside (a 21-digit ``--limit`` once reached SQLite, a 21-digit ``--pid`` psutil:
exit 70). The syntax is the project's strict numbers (:mod:`eagle_tui.model.numbers`):
``1e999``, ``0x10``, ``1_0``, ``nan`` and ``inf`` are not numbers. The bounds are what each
quantity can be: a process id fits ``pid_t``, a port 1-65535, a timeout or duration is finite
and at most :data:`MAX_SECONDS`, a count at most :data:`MAX_COUNT`, a rate > 0.
"""

from __future__ import annotations

import argparse
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path

from eagle_tui.model.buffers.limits import MAX_MAX_LINES, MIN_MAX_LINES
from eagle_tui.model.numbers import strict_float, strict_int

MAX_SECONDS = 30 * 86_400.0  # a month: longer than any wait, run or replay eagle-tui makes
MAX_COUNT = 1_000_000  # rows, requests, samples: far beyond a screen or a report
PID_MAX = 2**31 - 1  # pid_t; Linux's own ceiling (pid_max) is 2**22
MAX_RATE = 1e9  # tok/s, replay speed: finite and far above anything real


def _fmt(value: float) -> str:
    return f"{value:,}" if isinstance(value, int) or value >= 1000 else f"{value:g}"


def whole(lo: int, hi: int, what: str = "a whole number") -> Callable[[str], int]:
    """A whole number in ``[lo, hi]`` (strict: no ``_``, ``0x``, exponent, or 19+ digits)."""

    def parse(text: str) -> int:
        value = strict_int(text)
        if value is None or not lo <= value <= hi:
            raise argparse.ArgumentTypeError(
                f"must be {what} from {_fmt(lo)} to {_fmt(hi)}: {text!r}")
        return value

    parse.__name__ = what  # argparse names a type by it in some messages
    return parse


def number(lo: float, hi: float, *, above: bool = False, what: str = "a number"
           ) -> Callable[[str], float]:
    """A finite number in ``[lo, hi]`` (``above``: ``> lo``), strict syntax."""
    low = f"> {_fmt(lo)}" if above else f"≥ {_fmt(lo)}"

    def parse(text: str) -> float:
        value = strict_float(text)
        if value is None or value > hi or value < lo or (above and value == lo):
            raise argparse.ArgumentTypeError(f"must be {what} {low} and ≤ {_fmt(hi)}: {text!r}")
        return value

    parse.__name__ = what
    return parse


seconds = number(0.0, MAX_SECONDS, above=True, what="a number of seconds")
seconds_or_zero = number(0.0, MAX_SECONDS, what="a number of seconds")
rate = number(0.0, MAX_RATE, above=True, what="a rate")
count = whole(1, MAX_COUNT)
pid = whole(1, PID_MAX, "a process id")
log_lines = whole(MIN_MAX_LINES, MAX_MAX_LINES, "a number of log lines")  # the config's range
port = whole(1, 65_535, "a port")
port_or_any = whole(0, 65_535, "a port (0: any free one)")
seed = whole(0, 2**32 - 1, "a seed")

_PROM_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800,
               "y": 31_536_000}
_PROM_PART = re.compile(r"(\d{1,9})(ms|s|m|h|d|w|y)")
MAX_RANGE_S = 10 * 31_536_000  # ten years of samples is more than any Prometheus keeps


def prom_range(text: str) -> str:
    """A PromQL range (``30s``, ``1m``, ``1h30m``) of at most ten years, passed on as typed."""
    parts = _PROM_PART.findall(text)
    total = sum(int(n) * _PROM_UNITS[unit] for n, unit in parts)
    if not parts or "".join(n + u for n, u in parts) != text or not 0 < total <= MAX_RANGE_S:
        raise argparse.ArgumentTypeError(
            f"not a Prometheus duration like 30s or 5m (at most 10y): {text!r}")
    return text


MAX_NAME = 255  # bytes in one path component (NAME_MAX)
MAX_PATH = 4095  # bytes in a whole path (PATH_MAX less its NUL)


def path_text(text: str) -> str:
    """A path as typed, local or on a remote host: no NUL, no name longer than the system
    takes (``stat`` of such a name raises ``ENAMETOOLONG`` instead of answering)."""
    if "\x00" in text:
        raise argparse.ArgumentTypeError(f"a path cannot hold a NUL byte: {text!r}")
    encoded = os.fsencode(text)
    if len(encoded) > MAX_PATH or any(len(part) > MAX_NAME for part in encoded.split(b"/")):
        raise argparse.ArgumentTypeError(f"file name too long: {text[:80]!r}…")
    return text


def local_file_text(text: str) -> str:
    """A local file to read or write (may not exist yet; ``-`` passes): not a directory."""
    path_text(text)
    if text != "-" and os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"is a directory, not a file: {text!r}")
    return text


def local_file(text: str) -> Path:
    return Path(local_file_text(text))


def output_file(text: str) -> Path:
    """A local file to write (``--record``): a regular file or none yet, whose nearest existing
    folder is a folder. What only the write can tell (no room, no permission) the writer
    reports, in one line too."""
    path = Path(local_file_text(text))
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"{exc.strerror or exc}: {text!r}") from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise argparse.ArgumentTypeError(f"not a regular file: {text!r}")
    parent = path.absolute().parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise argparse.ArgumentTypeError(f"not a folder: {str(parent)!r} (in {text!r})")
    return path


def any_path(text: str) -> Path:
    return Path(path_text(text))


def container(text: str) -> str:
    """A docker/podman container name or id (the argv grammar's)."""
    from eagle_tui.model.boundary.grammar import GrammarError
    from eagle_tui.model.boundary.grammar import container as checked

    try:
        return checked(text)
    except GrammarError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


__all__ = [
    "MAX_COUNT",
    "MAX_NAME",
    "MAX_PATH",
    "MAX_RATE",
    "MAX_SECONDS",
    "PID_MAX",
    "any_path",
    "container",
    "count",
    "local_file",
    "local_file_text",
    "log_lines",
    "number",
    "output_file",
    "path_text",
    "pid",
    "port",
    "port_or_any",
    "prom_range",
    "rate",
    "seconds",
    "seconds_or_zero",
    "seed",
    "whole",
]
