"""A container's state → what the user sees, and the events the dashboard folds (pure).

The engines report a kernel OOM kill as ``State.OOMKilled``; where they do not (cgroup v1 hosts,
some runtimes) an exit 137 of a container with a memory limit is most likely the same thing, and
says so. A restart (a new ``.State.Pid``, a rising ``RestartCount``) is a new run, as a new server
process is: :func:`observe` emits the old run's :class:`ProcessExited` (with the container's
cause) and the new run's :class:`ProcessSample`, which the reducer already reads that way. An
end its engine answered with a restart (``--restart``) is a crash loop (:func:`container_crash`),
kept told in the runs it restarts until one of them is healthy.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from eagle_tui.model.containers.inspect import ContainerFacts
from eagle_tui.model.events import Event, ProcessExited, ProcessSample, ProcessStatus

SIGKILL_EXIT = 137  # 128 + SIGKILL: how a container's killed first process exits
# the LogRestarted reason of a container's log when the container runs again: a new process
RESTARTED = "container restarted"
LOOP_KIND = "crash_loop"  # the crash kind of a container its engine keeps restarting
_LIVE = ("running", "paused")
# how long a container's first exit waits for the restart its policy promises before it is the
# end (Docker's first restart comes after 100 ms; podman's when its cleanup process runs)
RESTART_GRACE_S = 5.0


def size_text(n: int) -> str:
    """``268435456`` → ``256 MiB``; ``17179869184`` → ``16 GiB``."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            value = n / (1 << shift)
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{n} B"


def _restarts(n: int) -> str:
    return f"; restarted {n} time{'s' if n != 1 else ''}" if n > 0 else ""


def kill_text(exit_code: int | None, oom_killed: bool, memory_limit: int | None,
              restarts: int = 0) -> str | None:
    """The container's end as a crash message when it was killed (None: it was not)."""
    limit = f" at {size_text(memory_limit)}" if memory_limit else ""
    if oom_killed:
        return f"killed: out of memory (OOMKilled){limit}{_restarts(restarts)}"
    if exit_code != SIGKILL_EXIT:
        return None
    if memory_limit:
        return (f"killed, likely OOM{limit} (exit 137 with a memory limit, no OOMKilled flag)"
                f"{_restarts(restarts)}")
    return ("killed (exit 137: SIGKILL — a `kill`, or the host's OOM killer, see `dmesg`)"
            f"{_restarts(restarts)}")


def span_text(seconds: float) -> str:
    """``90`` → ``90 s``; ``1500`` → ``25 min``; ``9000`` → ``2.5 h``."""
    if seconds < 120:
        return f"{max(seconds, 0):.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _retries(policy: str) -> int | None:
    """The most restarts a policy allows (``on-failure:5`` → 5; None: no bound)."""
    name, _, count = policy.partition(":")
    return int(count) if name == "on-failure" and count.isdigit() else None


def loop_text(restarts: int, policy: str, window_s: float | None,
              exit_code: int | None) -> str:
    """``crash loop: restarted 4 times in 90 s (--restart on-failure:5)``, with the last exit
    code where the engine still says it, and the end of the loop where the policy's retries
    are spent (an exit seen after them: the container stays down)."""
    within = f" in {span_text(window_s)}" if window_s is not None and window_s >= 0 else ""
    rule = f" (--restart {policy})" if policy else ""
    code = f"; last exit code {exit_code}" if exit_code is not None else ""
    cap = _retries(policy)
    spent = ("; no restarts left, it stays down" if cap is not None and exit_code is not None
             and restarts >= cap else "")
    return (f"crash loop: restarted {restarts} time{'s' if restarts != 1 else ''}{within}{rule}"
            f"{code}{spent}")


def restart_expected(ev: ProcessExited, now: float | None) -> bool:
    """Whether a container's exit is one its restart policy answers with a restart that has
    not come yet (``always``, ``unless-stopped``, ``on-failure`` after a failure with retries
    left), within :data:`RESTART_GRACE_S` of the exit: not yet the end of the run. Once the
    engine restarted it, its exits are a crash loop (:func:`container_crash`) whatever comes."""
    if not ev.container or ev.restarts > 0 or now is None or now - ev.t >= RESTART_GRACE_S:
        return False
    name = ev.restart_policy.partition(":")[0]
    if name in ("always", "unless-stopped"):
        return True
    cap = _retries(ev.restart_policy)
    return name == "on-failure" and bool(ev.exit_code) and (cap is None or cap > 0)


def container_crash(ev: ProcessExited) -> tuple[str, str] | None:
    """A container's end as ``(kind, message)`` of a crash: ``crash_loop`` once its engine has
    restarted it (a kill named too: OOMKilled, exit 137 with a memory limit), ``killed`` for a
    kill without restarts; None for an exit the log has to explain."""
    looped = ev.restarts > 0
    killed = kill_text(ev.exit_code, ev.oom_killed, ev.memory_limit,
                       0 if looped else ev.restarts)
    if not looped:
        return ("killed", killed) if killed is not None else None
    window = ev.t - ev.since if ev.since is not None else None
    loop = loop_text(ev.restarts, ev.restart_policy, window, ev.exit_code)
    return LOOP_KIND, f"{killed}; {loop}" if killed is not None else loop


def end_crash(f: ContainerFacts, t: float) -> tuple[str, str] | None:
    """What one look at a container says as a crash (``report``): an ended one's end, or the
    restarts of one its engine restarted (it may be running again)."""
    if f.status in ("exited", "dead"):
        return container_crash(exited_event(t, f.pid, f))
    if f.restart_count > 0:
        return container_crash(ProcessExited(t, f.pid, container=f.name or f.id[:12],
                                             restarts=f.restart_count,
                                             restart_policy=f.restart_policy,
                                             since=epoch(f.created)))
    return None


def exit_text(f: ContainerFacts) -> str:
    """How an ended container ended."""
    killed = kill_text(f.exit_code, f.oom_killed, f.memory_limit, f.restart_count)
    if killed is not None:
        return killed
    code = "" if f.exit_code is None else f" with code {f.exit_code}"
    if f.exit_code is not None and 128 < f.exit_code < 160:
        code += f" (signal {f.exit_code - 128})"
    return f"exited{code}{_restarts(f.restart_count)}"


def status_text(f: ContainerFacts) -> str:
    """One line for the container's state: running, paused, restarting, exited with code, ..."""
    if f.status in ("exited", "dead"):
        text = exit_text(f)
        return text if f.status == "exited" else f"dead: {text}"
    if f.status == "restarting":
        return f"restarting (restart {f.restart_count + 1}, policy {f.restart_policy or '?'})"
    if f.status == "created":
        return "created, not started"
    return f"{f.status}{_restarts(f.restart_count)}"


def epoch(stamp: str) -> float | None:
    """An RFC 3339 time with nanoseconds (``2026-12-02T08:25:38.757291725Z``) as epoch seconds."""
    if not stamp or len(stamp) > 64:
        return None
    head, dot, rest = stamp.partition(".")
    zone = ""
    if dot:
        digits = len(rest) - len(rest.lstrip("0123456789"))
        frac, zone = rest[:digits][:6], rest[digits:]
        head = f"{head}.{frac or '0'}"
    else:
        for sign in ("Z", "+", "-"):
            at = head.rfind(sign, 19)
            if at >= 0:
                head, zone = head[:at], head[at:]
                break
    try:
        return datetime.fromisoformat(head + ("+00:00" if zone in ("", "Z") else zone)
                                      ).timestamp()
    except ValueError:
        return None


def exited_event(t: float, pid: int, f: ContainerFacts | None) -> ProcessExited:
    """The end of the run whose first process was ``pid``, as ``f`` (the newest inspect; None:
    the container is gone) tells it."""
    if f is None:
        return ProcessExited(t, pid)
    code = f.exit_code if f.status not in _LIVE or f.exit_code else None
    signal = code - 128 if code is not None and 128 < code < 160 else None
    return ProcessExited(t, pid, code, signal, container=f.name or f.id[:12],
                         oom_killed=f.oom_killed, memory_limit=f.memory_limit or None,
                         restarts=f.restart_count, restart_policy=f.restart_policy,
                         since=epoch(f.created))


def sample_event(t: float, f: ContainerFacts, pids: tuple[int, ...] = (),
                 rss_bytes: int | None = None, cpu_percent: float | None = None
                 ) -> ProcessSample:
    """The running container as a process sample: its first process's host PID, and ``pids``
    (that process and its descendants, where they could be read)."""
    status: ProcessStatus = "paused" if f.status == "paused" else "running"
    tree = pids or (f.pid,)
    return ProcessSample(t, f.pid, status, f"container {f.name or f.id[:12]} ({f.status})",
                         rss_bytes, cpu_percent, epoch(f.started_at), len(tree), None, tree)


def observe(prev: ContainerFacts | None, cur: ContainerFacts | None, t: float,
            pids: tuple[int, ...] = (), rss_bytes: int | None = None,
            cpu_percent: float | None = None) -> list[Event]:
    """The events between two inspects of one container (``prev`` None: the first look; ``cur``
    None: it is gone). A run ends when its first process is no longer the container's (it
    exited, or the container restarted between two looks: a new PID or a higher RestartCount)."""
    events: list[Event] = []
    was = prev is not None and prev.status in (*_LIVE, "restarting") and prev.pid > 0
    live = cur is not None and cur.status in _LIVE and cur.pid > 0
    if prev is not None and was and (
            cur is None or not live or cur.pid != prev.pid
            or cur.restart_count > prev.restart_count):
        events.append(exited_event(t, prev.pid, cur))
    elif cur is not None and not live and cur.status in ("exited", "dead") and (
            prev is None or cur.started_at != prev.started_at):
        # first seen already ended, or a run that began and ended between two looks
        events.append(exited_event(t, cur.pid, cur))
    elif prev is not None and cur is not None and live and cur.restart_count > prev.restart_count:
        # its engine restarted it after the exit was told: that end, restarted, is a loop's
        events.append(exited_event(t, prev.pid, replace(prev, restart_count=cur.restart_count)))
    if cur is not None and live:
        events.append(sample_event(t, cur, pids, rss_bytes, cpu_percent))
    return events


__all__ = ["LOOP_KIND", "RESTARTED", "RESTART_GRACE_S", "container_crash", "end_crash", "epoch",
           "exit_text", "exited_event", "kill_text", "loop_text", "observe", "restart_expected",
           "sample_event", "size_text", "span_text", "status_text"]
