"""One framing for every remote command: its output between random per-call markers.

sshd runs a command through the user's login shell, whose rc files may print (a ``.bashrc``
echo, conda's messages) before the command or from an exit trap after it. So every exec is
wrapped::

    printf 'EAGLE-%s-BEGIN\\n' HEX; printf 'EAGLE-%s-BEGIN\\n' HEX >&2
    COMMAND
    e=$?; printf '\\nEAGLE-%s-END %d\\n' HEX "$e"; printf '\\nEAGLE-%s-END %d\\n' HEX "$e" >&2

More in docs/architecture.md, "Module notes", ``transport/ssh/frame``.
"""

from __future__ import annotations

import math
import secrets
import shlex
from dataclasses import dataclass

from eagle_tui.transport.base import TransportError

_MAX_NOISE = 1 << 20  # bytes of noise before the BEGIN marker that are tolerated
_KEEP_NOISE = 4096  # the last noise kept to explain a command that never started
# A command runs as a job that ends with its session: sshd (the shell's parent, one per
# connection) neither hangs up a command without a terminal nor kills it when its channel or
# connection closes, so a ``wc`` of a FIFO or a ``logs --follow`` of a quiet container ran on for
# ever. A watcher ends the job (TERM) once that parent is gone or, given a limit, after it.
_WATCH = ('(n=0; while kill -0 "$PPID" 2>/dev/null{until}; do sleep 1; n=$((n+1)); done; '
          'kill -TERM "$p" 2>/dev/null) </dev/null >/dev/null 2>&1 & w=$!; '
          'wait "$p"; e=$?; kill "$w" 2>/dev/null')
_REPLACE = ('printf "EAGLE-%s-BEGIN\\n" "$1"; printf "EAGLE-%s-BEGIN\\n" "$1" >&2; '
            'exec 3<&0; eval "$2 <&3 3<&- &"; p=$!; exec 3<&-; '
            + _WATCH.replace("{until}", "") + '; exit "$e"')


class FrameError(TransportError):
    """The remote shell did not run the framed command (no BEGIN marker)."""


@dataclass(frozen=True, slots=True)
class Framed:
    """A command wrapped for the login shell: ``text`` is what the exec channel runs."""

    text: str
    token: str
    replaces_shell: bool  # ``exec COMMAND``: no END marker, the channel's status is the command's


def guarded(command: str, limit_s: float | None = None) -> str:
    """``command`` as a job that ends with its session (see ``_WATCH``), or after ``limit_s``
    seconds; the exit status stays the command's (``$e``). ``command`` is one simple command
    (an argv joined, a ``sh -c`` script that execs its last step): the job is that very
    process, which TERM ends (a shell without a terminal has no process groups to kill)."""
    until = "" if limit_s is None else f' && [ "$n" -lt {math.ceil(limit_s)} ]'
    return (f"exec 3<&0\n{command} <&3 3<&- & p=$!; exec 3<&-\n"
            + _WATCH.replace("{until}", until))


def frame(command: str, *, replaces_shell: bool = False, token: str | None = None,
          limit_s: float | None = None) -> Framed:
    """Wrap ``command`` (a shell command line, already quoted) between fresh markers; it runs as
    a job that ends with its session, or after ``limit_s`` seconds."""
    hex_ = token or secrets.token_hex(16)
    if replaces_shell:
        # the markers come from a plain ``sh`` that has replaced the login shell, so an exit
        # trap of the login shell cannot print after them, not even when the command's own
        # ``exec`` fails (not found): sh then exits 127 without a word of noise
        return Framed(f"exec sh -c {shlex.quote(_REPLACE)} sh {hex_} {shlex.quote(command)}",
                      hex_, True)
    begin = f"printf 'EAGLE-%s-BEGIN\\n' {hex_}; printf 'EAGLE-%s-BEGIN\\n' {hex_} >&2\n"
    end = (f"\nprintf '\\nEAGLE-%s-END %d\\n' {hex_} \"$e\"; "
           f"printf '\\nEAGLE-%s-END %d\\n' {hex_} \"$e\" >&2; exit \"$e\"")
    return Framed(f"{begin}{guarded(command, limit_s)}{end}", hex_, False)


class _Side:
    """One stream (stdout or stderr): skip to BEGIN, pass on until END, drop what follows."""

    def __init__(self, token: str, ends: bool) -> None:
        self._begin = f"EAGLE-{token}-BEGIN\n".encode()
        self._end = f"\nEAGLE-{token}-END ".encode() if ends else b""
        self._buf = b""
        self._skipped = 0
        self.state = "before"  # before → inside → trailer (reading the code) → after
        self.code: int | None = None
        self.noise = b""  # the last noise before BEGIN (for an error message)

    def feed(self, data: bytes) -> bytes:
        if self.state == "before":
            buf = self._buf + data
            at = buf.find(self._begin)
            if at < 0:  # all noise so far; keep what could be the start of BEGIN
                cut = max(0, len(buf) - len(self._begin) + 1)
                self.noise = (self.noise + buf[:cut])[-_KEEP_NOISE:]
                self._buf = buf[cut:]
                self._skipped += len(data)
                if self._skipped > _MAX_NOISE:
                    raise FrameError("more than 1 MiB of login-shell output before the command")
                return b""
            self.noise = (self.noise + buf[:at])[-_KEEP_NOISE:]
            self.state, self._buf, data = "inside", b"", buf[at + len(self._begin):]
        if self.state == "inside":
            if not self._end:
                return data
            buf = self._buf + data
            at = buf.find(self._end)
            if at < 0:
                hold = _partial_suffix(buf, self._end)
                self._buf = buf[len(buf) - hold:]
                return buf[:len(buf) - hold]
            self.state, self._buf = "trailer", buf[at + len(self._end):]
            self._read_code()
            return buf[:at]
        if self.state == "trailer":
            self._buf += data
            self._read_code()
        return b""

    def _read_code(self) -> None:
        line, nl, _ = self._buf.partition(b"\n")
        if nl or len(self._buf) > 16:
            self.state, self._buf = "after", b""
            self.code = int(line) if line.isdigit() and len(line) <= 3 else None

    def said(self) -> bytes:
        """The noise seen so far (while still before BEGIN, including what is held back)."""
        return self.noise + (self._buf if self.state == "before" else b"")

    def flush(self) -> bytes:
        """At the stream's end: bytes held back as a possible start of END are output after all."""
        if self.state != "inside":
            return b""
        held, self._buf = self._buf, b""
        return held


def _partial_suffix(buf: bytes, marker: bytes) -> int:
    """The length of the longest end of ``buf`` that is a proper start of ``marker``."""
    for n in range(min(len(buf), len(marker) - 1), 0, -1):
        if buf.endswith(marker[:n]):
            return n
    return 0


class Deframer:
    """The command's own stdout and stderr, out of what a framed exec channel delivers."""

    def __init__(self, framed: Framed) -> None:
        ends = not framed.replaces_shell
        self._out = _Side(framed.token, ends)
        self._err = _Side(framed.token, ends)

    def out(self, data: bytes) -> bytes:
        return self._out.feed(data)

    def err(self, data: bytes) -> bytes:
        return self._err.feed(data)

    @property
    def started(self) -> bool:
        return self._out.state != "before"

    def finish(self, channel_code: int, where: str) -> tuple[bytes, bytes, int]:
        """At the channel's exit: held-back stdout and stderr, and the command's exit status.

        Raises :class:`FrameError` when the command never started (the login shell failed or
        is not a POSIX shell), with the shell's last words.
        """
        if not self.started:
            said = (self._err.said() or self._out.said()).decode("utf-8", "replace").strip()
            last = said.splitlines()[-1][:200] if said else f"exit {channel_code}"
            raise FrameError(f"the login shell on {where} did not run the command "
                             f"(is it a POSIX shell?): {last}")
        code = self._out.code if self._out.code is not None else channel_code
        return self._out.flush(), self._err.flush(), code


__all__ = ["Deframer", "FrameError", "Framed", "frame"]
