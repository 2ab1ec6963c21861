"""The remote ``tail -F`` command and the bookkeeping that makes resuming exact.

Why byte offsets: after a reconnect the new ``tail`` must start at the first byte the old one had
not delivered — no line lost, none repeated. The follower counts the bytes it has *yielded* and
resumes with ``tail -c +OFFSET+1``. Bytes received but not yet yielded (the part of a line after
its last ``\\n``/``\\r``) are dropped on a reconnect and read again by the new tail.

The remote script (``tail -F`` that also reports the file's inode) is drawn in the notes.

More in docs/architecture.md, "Module notes", ``transport/ssh/tail``.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from eagle_tui.transport.base import TailChunk

NOT_REGULAR_EXIT = 66  # the script's exit code for a path that is not a regular file
_SCRIPT = (
    "o={offset}; i={inode}; f={path}; "
    'if [ -e "$f" ] && [ ! -f "$f" ]; then '
    'printf "eagle-tui-not-regular: %s\\n" "$(stat -L -c %F -- "$f" 2>/dev/null)" >&2; '
    f"exit {NOT_REGULAR_EXIT}; fi; "
    'set -- $(stat -L -c "%s %i" -- "$f" 2>/dev/null); s=${{1:-0}}; n=${{2:-}}; '
    'if [ "$s" -lt "$o" ] || {{ [ -n "$i" ] && [ -n "$n" ] && [ "$n" != "$i" ]; }}; then o=0; fi; '
    'printf "%s %s %s\\n" "$o" "$n" "$s"; '
    # GNU tail follows by inotify and writes each line as it lands (a packet a line over SSH);
    # polled (its hidden ---disable-inotify, where it has one) it writes a 0.2 s gathering at once
    'p=; tail ---disable-inotify -c 0 -- /dev/null >/dev/null 2>&1 && p=---disable-inotify; '
    'exec tail $p -c +$((o+1)) -F -s 0.2 --pid=$PPID -- "$f"'
)

_MAX_PENDING = 1 << 20  # a "line" longer than this is passed on without waiting for its end


def tail_command(path: str, offset: int, inode: int | None) -> str:
    """The shell command line (for the remote login shell) that resumes ``path`` at ``offset``;
    the transport frames it to replace the login shell (``exec``, :mod:`.frame`)."""
    if offset < 0:
        raise ValueError("offset must be >= 0")
    script = _SCRIPT.format(
        offset=int(offset),
        inode="" if inode is None else int(inode),
        path=shlex.quote(path),
    )
    return "sh -c " + shlex.quote(script)


@dataclass
class TailFollower:
    """Pure state machine: feed it the remote tail's output, get :class:`TailChunk` s back."""

    offset: int = 0
    inode: int | None = None
    _pending: bytes = b""
    _header: bytes | None = None  # bytes of the header line read so far (None: header done)
    _err: bytes = b""
    _requested: int = 0
    _resumed: bool = False
    _backlog_end: int = 0  # file size when this tail started: reaching it = caught up
    _recent: list[str] = field(default_factory=list)  # last non-notice stderr lines, for errors

    def start(self, *, resumed: bool) -> None:
        """Begin a new remote tail (first call or after a reconnect).

        Drops any partial line: the new tail re-reads it from :attr:`offset`.
        """
        self._pending = b""
        self._header = b""
        self._err = b""
        self._recent = []
        self._requested = self.offset
        self._resumed = resumed

    def feed_out(self, data: bytes) -> list[TailChunk]:
        out: list[TailChunk] = []
        if self._header is not None:
            self._header += data
            nl = self._header.find(b"\n")
            if nl < 0:
                if len(self._header) > 4096:
                    raise ValueError("remote tail wrapper printed no header")
                return out
            header, data = self._header[:nl], self._header[nl + 1 :]
            self._header = None
            out.extend(self._apply_header(header))
        if not data:
            return out
        buf = self._pending + data
        cut = max(buf.rfind(b"\n"), buf.rfind(b"\r")) + 1
        if cut == 0 and len(buf) > _MAX_PENDING:
            cut = len(buf)
        self._pending = buf[cut:]
        if cut:
            self.offset += cut
            at_eof = self.offset + len(self._pending) >= self._backlog_end
            out.append(TailChunk(data=buf[:cut], offset=self.offset, at_eof=at_eof))
        return out

    def _apply_header(self, header: bytes) -> list[TailChunk]:
        parts = header.decode("ascii", "replace").strip().split(" ")  # "o inode size"; inode
        # is empty when the file does not exist, so split on single spaces to keep positions
        try:
            effective = int(parts[0])
        except (IndexError, ValueError) as exc:
            raise ValueError(f"unexpected remote tail header {header[:80]!r}") from exc
        old_inode = self.inode
        self.inode = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
        self._backlog_end = int(parts[2]) if len(parts) > 2 and parts[2].isdigit() else 0
        reason = ""
        if effective != self._requested:
            self.offset = 0
            replaced = old_inode is not None and self.inode is not None and old_inode != self.inode
            if replaced:
                reason = "replaced"
            else:
                reason = "reconnected-truncated" if self._resumed else "truncated"
        if reason or self.offset >= self._backlog_end:
            # a restart to announce, or nothing to catch up on: say so before any data
            at_eof = self.offset >= self._backlog_end
            return [TailChunk(data=b"", offset=self.offset, restarted=reason, at_eof=at_eof)]
        return []

    def feed_err(self, data: bytes) -> list[TailChunk]:
        """Tail's notices. Returns a restart chunk when the file was truncated or replaced."""
        self._err += data
        out: list[TailChunk] = []
        while b"\n" in self._err:
            line, self._err = self._err.split(b"\n", 1)
            text = line.decode("utf-8", "replace").strip()
            reason = _notice_reason(text, self.offset)
            if not reason and text:
                self._recent = [*self._recent[-4:], text]
            if reason:
                self.offset = 0
                self.inode = None
                self._pending = b""
                self._backlog_end = 0
                out.append(TailChunk(data=b"", offset=0, restarted=reason))
        if len(self._err) > 65536:
            self._err = self._err[-4096:]
        return out

    def stderr_text(self) -> str:
        """The last few lines tail wrote to stderr (for an error message when it exits)."""
        tail = self._err.decode("utf-8", "replace").strip()
        return "; ".join([*self._recent, tail] if tail else self._recent)


def _notice_reason(line: str, offset: int) -> str:
    text = line.rstrip()
    if text.endswith(": file truncated"):
        return "truncated"
    if "has been replaced" in text:
        return "replaced"
    if "has appeared" in text and offset > 0:
        return "replaced"
    return ""


def not_regular_kind(stderr_text: str) -> str:
    """The kind the script named on stderr (``fifo``, ``character special file``, ...)."""
    mark = "eagle-tui-not-regular: "
    at = stderr_text.find(mark)
    if at < 0:
        return "not a regular file"
    kind = stderr_text[at + len(mark):].split(";", 1)[0].strip()[:60]
    return f"a {kind}" if kind else "not a regular file"


__all__ = ["NOT_REGULAR_EXIT", "TailFollower", "not_regular_kind", "tail_command"]
