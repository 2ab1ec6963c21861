"""Find the engines' servers among a host's processes (pure: the rows come from a scan).

A server is one *launcher* process — a command line that :mod:`.cmdline` parses as an engine
launch (an entry point of a registered engine's profile: ``python -m sglang.launch_server``,
``sglang serve``, ``vllm serve``, the OpenAI API server module) — plus every process below it
(SGLang's scheduler and detokenizer, vLLM's API server, EngineCore and workers). A launcher
below another launcher (vLLM's API server under ``vllm serve``) belongs to the outer one.
Nothing else is ever taken for a server: eagle-tui's own processes (its remote ``tail``, its
``sh -c`` helpers, ``python -m eagle_tui``) are never launchers, so a dropped connection can
never read as a crashed server.

Where the log is comes from the launcher's stdout/stderr: a file (shown, and followed), or a
pipe, a terminal, a socket (a container's or journald's log) or nothing — then the user is
asked for ``--log``.
"""

from __future__ import annotations

from typing import Literal

from eagle_tui.model.boundary.grammar import GrammarError, host_name, port, remote_path
from eagle_tui.model.launching.cmdline import (
    CommandError,
    Engine,
    FlagTable,
    ParsedCommand,
    launch_profile,
    parse_command,
)
from eagle_tui.model.record import Record, record

LogKind = Literal["file", "deleted", "pipe", "terminal", "socket", "none", "unknown"]
_OWN_NAMES = frozenset({"eagle-tui-launch", "eagle-tui-group", "eagle-tui-stop", "eagle-tui-scan"})


@record
class ProcRow(Record):
    """One process of the scan: ids, start time (clock ticks), stdout/stderr targets, argv."""

    pid: int
    ppid: int
    pgid: int
    start: str
    stdout: str
    stderr: str
    cwd: str
    argv: tuple[str, ...]


@record
class Found(Record):
    """One server: its launcher, its command read the engine's way, its log and its tree."""

    engine: Engine
    launcher: ProcRow
    cmd: ParsedCommand
    members: tuple[ProcRow, ...]
    log_kind: LogKind
    log_path: str | None
    port: int
    url: str

    @property
    def algorithm(self) -> str | None:
        return launch_profile(self.engine).launch.read_plan(self.cmd).algorithm

    @property
    def tp(self) -> int:
        value = self.cmd.get(launch_profile(self.engine).launch.tp_dest)
        return int(value) if isinstance(value, str) and value.isdigit() and len(value) < 5 else 1

    @property
    def draft(self) -> str | None:
        value = launch_profile(self.engine).launch.read_plan(self.cmd).draft
        return value if isinstance(value, str) else None

    def describe(self) -> str:
        algo = self.algorithm or "no speculation"
        log = self.log_path if self.log_kind == "file" else f"log: {self.log_kind}"
        return (f"{self.engine} pid {self.launcher.pid}, port {self.port}, {algo}, tp "
                f"{self.tp}, {len(self.members)} process(es), {log}")


def is_own(argv: tuple[str, ...]) -> bool:
    """One of eagle-tui's own processes (never a server, whatever its command line says): the
    ``eagle-tui`` command, ``python -m eagle_tui...``, or one of its ``sh -c`` helpers (named by
    their ``$0``). Only whole words are compared: a server whose paths merely contain
    "eagle-tui" (a folder name) is still a server."""
    if not argv:
        return False
    if argv[0].rsplit("/", 1)[-1] == "eagle-tui":
        return True
    for i, word in enumerate(argv[:6]):
        if word == "-m" and i + 1 < len(argv) and argv[i + 1].split(".")[0] == "eagle_tui":
            return True
        if word in _OWN_NAMES:
            return True
    return False


def log_target(link: str, cwd: str) -> tuple[LogKind, str | None]:
    """What a ``/proc/PID/fd/1`` link points at."""
    if not link:
        return "unknown", None
    if link.startswith("pipe:"):
        return "pipe", None
    if link.startswith("socket:"):
        return "socket", None
    if link in ("/dev/null",):
        return "none", None
    if link.startswith(("/dev/pts/", "/dev/tty", "/dev/console")):
        return "terminal", None
    if not _safe_path(link):  # a name with control characters is not handed to any command
        return "unknown", None
    if link.endswith(" (deleted)"):
        return "deleted", link.removesuffix(" (deleted)")
    if link.startswith("/"):
        return "file", link
    return "unknown", None


def _safe_path(link: str) -> bool:
    try:
        remote_path(link)
    except GrammarError:
        return False
    return True


def _port(value: object, default: int) -> int:
    try:
        return port(value) if isinstance(value, str) else default
    except GrammarError:
        return default


def _host(value: object) -> str:
    """The ``--host`` a server binds, when it is one a URL can name; else loopback."""
    if not isinstance(value, str) or value in ("", "0.0.0.0", "::"):
        return "127.0.0.1"
    try:
        return host_name(f"[{value}]" if ":" in value else value)
    except GrammarError:
        return "127.0.0.1"


def _launch(row: ProcRow, tables: dict[Engine, FlagTable]) -> ParsedCommand | None:
    if not row.argv or is_own(row.argv):
        return None
    try:
        return parse_command(list(row.argv), tables)
    except CommandError:
        return None


def find_servers(rows: list[ProcRow], tables: dict[Engine, FlagTable]) -> list[Found]:
    """The servers among ``rows`` (outermost launcher of each tree), by launcher pid."""
    by_pid = {r.pid: r for r in rows}
    children: dict[int, list[ProcRow]] = {}
    for r in rows:
        children.setdefault(r.ppid, []).append(r)
    launches = {r.pid: cmd for r in rows if (cmd := _launch(r, tables)) is not None}

    def outer(pid: int) -> bool:
        seen = 0
        p = by_pid[pid].ppid
        while p in by_pid and seen < 64:  # bounded: a corrupt scan cannot loop
            if p in launches:
                return False
            p = by_pid[p].ppid
            seen += 1
        return True

    found: list[Found] = []
    for pid in sorted(launches):
        if not outer(pid):
            continue
        row, cmd = by_pid[pid], launches[pid]
        tree: list[ProcRow] = []
        todo = [row]
        while todo and len(tree) < 4096:
            cur = todo.pop()
            tree.append(cur)
            todo.extend(children.get(cur.pid, []))
        kind, path = log_target(row.stdout, row.cwd)
        if kind in ("terminal", "none", "unknown") and row.stderr != row.stdout:
            k2, p2 = log_target(row.stderr, row.cwd)
            if k2 in ("file", "deleted"):
                kind, path = k2, p2
        # the command line is the host's, not the user's: its port and host pass the grammar
        profile = launch_profile(cmd.engine)
        number = _port(cmd.get(profile.launch.port_dest), profile.default_port)
        host = _host(cmd.get(profile.launch.host_dest))
        found.append(Found(cmd.engine, row, cmd, tuple(sorted(tree, key=lambda r: r.pid)),
                           kind, path, number, f"http://{host}:{number}"))
    return found


MAX_ROWS = 100_000
_HEAD_MAX = 120  # bytes of a record's head: eight numbers


def scan_record(pid: int, ppid: int, pgid: int, start: str, stdout: str, stderr: str, cwd: str,
                argv: tuple[str, ...]) -> bytes:
    """One process as the scan script prints it (see :func:`parse_scan`)."""
    fields = [f.encode() for f in (stdout, stderr, cwd, "\x1f".join(argv))]
    head = f"{pid} {ppid} {pgid} {start} " + " ".join(str(len(f)) for f in fields)
    return head.encode() + b"\n" + b"".join(fields) + b"\n"


def parse_scan(data: bytes) -> list[ProcRow]:
    """The scan script's output: for each process a head line (pid, parent, group, start time
    and the byte lengths of its four text fields), then those fields end to end and a newline.

    The text fields are the host's: a process's argv or folder may hold tabs and newlines (any
    user can start one whose argv reads as a row of another process), so they are counted,
    never split on. A line that is not such a head (a login banner) is skipped; a record cut
    short ends the parse.
    """
    rows: list[ProcRow] = []
    pos, end = 0, len(data)
    while pos < end and len(rows) < MAX_ROWS:
        nl = data.find(b"\n", pos, pos + _HEAD_MAX)
        if nl < 0:
            nl = data.find(b"\n", pos)
            if nl < 0:
                break
            pos = nl + 1  # (too long for a head: not one)
            continue
        head = data[pos:nl].split(b" ")
        pos = nl + 1
        if len(head) != 8 or not all(h.isdigit() and len(h) <= 20 for h in head):
            continue
        lengths = [int(h) for h in head[4:]]
        stop = pos + sum(lengths)
        if stop >= end or data[stop] != 0x0A:
            continue  # (not a record's head after all: read on from the next line)
        fields: list[str] = []
        at = pos
        for n in lengths:
            fields.append(data[at : at + n].decode("utf-8", "replace"))
            at += n
        pos = stop + 1
        argv = tuple(a for a in fields[3].split("\x1f") if a)[:2000]
        rows.append(ProcRow(int(head[0]), int(head[1]), int(head[2]), head[3].decode(),
                            fields[0], fields[1], fields[2], argv))
    return rows


__all__ = ["MAX_ROWS", "Found", "LogKind", "ProcRow", "find_servers", "is_own", "log_target",
           "parse_scan", "scan_record"]
