"""One authenticated SSH connection (paramiko), opened and watched from plain threads.

Everything here blocks: it is called from the SSH transport's worker threads, never from the
event loop. A :class:`Link` is one live paramiko ``Transport`` (plus the links of any ProxyJump
hosts it tunnels through); when it dies it is thrown away and a new one is opened — paramiko
transports cannot be revived.

Why an app-level keepalive (``keepalive@openssh.com`` with ``wait=True``): paramiko's own
``set_keepalive`` expects no reply, so a hung host (SIGSTOPped sshd, a dropped network) goes
unnoticed for long (docs/reliability.md). A request that *needs* an answer, sent every second
with a short deadline, notices both within a few seconds. ``TCP_USER_TIMEOUT`` on the socket
is the kernel's backstop for unacknowledged writes.

More in docs/architecture.md, "Module notes", ``transport/ssh/link``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eagle_tui.transport.base import HostKeyError, TransportError
from eagle_tui.transport.ssh.config import SshTarget
from eagle_tui.transport.ssh.hostkeys import KnownHosts, default_known_hosts
from eagle_tui.transport.ssh.keys import load_key

log = logging.getLogger(__name__)

_ACTIVE_POLL_S = 0.1
_DEFAULT_IDENTITIES = ("~/.ssh/id_ed25519", "~/.ssh/id_ecdsa", "~/.ssh/id_rsa")

class AuthError(TransportError):
    """No offered key was accepted by the server."""


class Attempt:
    """One connection attempt's deadline, shared by its phases, and what it has opened (so a
    closing transport aborts it instead of waiting out a stalled handshake)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._end = time.monotonic() + seconds
        self._held: list[Any] = []
        self._lock = threading.Lock()
        self._cancelled = False

    def left(self, phase: str) -> float:
        """Seconds left for ``phase``; :class:`TransportError` naming it when none are."""
        if self._cancelled:
            raise TransportError(f"{phase}: the connection attempt was closed")
        left = self._end - time.monotonic()
        if left <= 0:
            raise TransportError(f"{phase}: no answer within {self.seconds:g} s")
        return left

    def expired(self) -> bool:
        return self._cancelled or time.monotonic() >= self._end

    def hold(self, closeable: Any) -> None:
        """Close ``closeable`` (a socket, a paramiko transport) when the attempt is cancelled."""
        with self._lock:
            if not self._cancelled:
                self._held.append(closeable)
                return
        with contextlib.suppress(Exception):
            closeable.close()

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            held, self._held = self._held, []
        for thing in held:
            with contextlib.suppress(Exception):
                thing.close()


@dataclass(frozen=True)
class SshOptions:
    """Everything about *how* to connect that does not depend on the destination.

    Authentication is by key only: ``--identity`` files, ``IdentityFile`` from the config, the
    ssh-agent, then the default identities. eagle-tui never asks for, stores or passes a password
    or passphrase (a reconnect in the middle of a dashboard could not prompt anyway): an encrypted
    key is used through ssh-agent (``ssh-add FILE``).
    """

    identity_files: tuple[str, ...] = ()
    known_hosts_files: tuple[Path, ...] = ()
    accept_new_host_key: bool = False
    config_path: Path | None = None
    use_config: bool = True
    outside: bool = False  # the destination came from outside (see config.py): no Match exec
    user_known_hosts: bool = True
    use_agent: bool = True
    default_identities: bool = True
    connect_timeout: float = 10.0  # the whole handshake: TCP, banner, key exchange, auth
    keepalive_interval: float = 1.0
    keepalive_timeout: float = 1.8  # + interval 1 s: a hung host is noticed in < 3 s
    tcp_user_timeout_ms: int = 5000

    def known_hosts(self) -> KnownHosts:
        """Files to trust: ``~/.ssh/known_hosts`` (unless disabled) plus each ``--known-hosts``.

        New keys (``--accept-new-host-key``) go to the first ``--known-hosts`` file when one was
        given — the user chose it — and to ``~/.ssh/known_hosts`` otherwise.
        """
        files: list[Path] = []
        if self.user_known_hosts:
            files.append(default_known_hosts())
        files.extend(self.known_hosts_files)
        write_to = self.known_hosts_files[0] if self.known_hosts_files else default_known_hosts()
        return KnownHosts(files, write_to)


class Link:
    """A connected, authenticated paramiko transport and the jump links beneath it."""

    def __init__(self, target: SshTarget, transport: Any, below: list[Link]) -> None:
        self.target = target
        self.transport = transport
        self._below = below
        self._closed = False

    def is_active(self) -> bool:
        return not self._closed and bool(self.transport.is_active())

    def open_session(self, timeout: float) -> Any:
        try:
            return self.transport.open_session(timeout=timeout)
        except Exception as exc:
            dest = self.target.dest
            raise TransportError(f"cannot open an SSH channel to {dest}: {exc}") from exc

    def open_direct(self, host: str, port: int, timeout: float) -> Any:
        """A ``direct-tcpip`` channel to ``host:port`` as seen from the remote host."""
        return self.transport.open_channel(
            "direct-tcpip", (host, port), ("127.0.0.1", 0), timeout=timeout
        )

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(Exception):
            self.transport.close()
        for link in self._below:
            link.close()


def open_link(target: SshTarget, options: SshOptions, known: KnownHosts,
              attempt: Attempt | None = None) -> Link:
    """Connect, check the host key, authenticate, every phase within ``attempt``'s deadline
    (a fresh ``connect_timeout`` one by default). Raises :class:`TransportError` subclasses."""
    attempt = attempt or Attempt(options.connect_timeout)
    below: list[Link] = []
    try:
        if target.jumps:
            hop = open_link(target.jumps[0], options, known, attempt)
            below.append(hop)
            for nxt in target.jumps[1:]:
                hop = _link_over(hop, nxt, options, known, attempt)
                below.append(hop)
            sock: Any = _tunnel(hop, target, attempt)
        else:
            sock = _tcp_connect(target, options, attempt)
        return _handshake(target, sock, options, known, below, attempt)
    except BaseException:
        for link in below:
            link.close()
        raise


def _link_over(hop: Link, nxt: SshTarget, options: SshOptions, known: KnownHosts,
               attempt: Attempt) -> Link:
    chan = _tunnel(hop, nxt, attempt)
    return _handshake(nxt, chan, options, known, [], attempt)


def _tunnel(hop: Link, target: SshTarget, attempt: Attempt) -> Any:
    timeout = attempt.left(f"jump host {hop.target.dest} to {target.hostname}:{target.port}")
    try:
        return hop.open_direct(target.hostname, target.port, timeout)
    except Exception as exc:
        raise TransportError(
            f"jump host {hop.target.dest} cannot reach {target.hostname}:{target.port}: {exc}"
        ) from exc


def _tcp_connect(target: SshTarget, options: SshOptions, attempt: Attempt) -> socket.socket:
    where = f"{target.hostname}:{target.port}"
    timeout = attempt.left(f"cannot connect to {where}")
    try:
        sock = socket.create_connection((target.hostname, target.port), timeout)
    except socket.gaierror as exc:
        raise TransportError(f"cannot resolve {target.hostname!r}: {exc.strerror}") from exc
    except TimeoutError as exc:
        raise TransportError(
            f"cannot connect to {where}: timed out after {attempt.seconds:g} s"
        ) from exc
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise TransportError(f"cannot connect to {where}: {reason}") from exc
    attempt.hold(sock)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    tcp_user_timeout = getattr(socket, "TCP_USER_TIMEOUT", None)
    if tcp_user_timeout is not None and options.tcp_user_timeout_ms > 0:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, tcp_user_timeout, options.tcp_user_timeout_ms)
    sock.settimeout(None)
    return sock


def _prefer_known_key_types(transport: Any, known_types: list[str]) -> None:
    """Ask first for the host-key types already in known_hosts, so a host with several keys
    sends the one we can verify (``ssh-rsa`` entries cover the ``rsa-sha2-*`` algorithms)."""
    if not known_types:
        return

    def base(alg: str) -> str:
        return "ssh-rsa" if alg.startswith("rsa-sha2-") else alg

    opts = transport.get_security_options()
    current = list(opts.key_types)
    first = [alg for alg in current if base(alg) in known_types]
    opts.key_types = first + [alg for alg in current if alg not in first]


def _quiet_paramiko() -> None:
    """paramiko logs channel failures at ERROR; with no handler configured Python's last-resort
    handler would print them to stderr — over the dashboard. Our errors carry the same facts."""
    logger = logging.getLogger("paramiko")
    if not logger.handlers:
        logger.addHandler(logging.NullHandler())


def _handshake(
    target: SshTarget, sock: Any, options: SshOptions, known: KnownHosts, below: list[Link],
    attempt: Attempt,
) -> Link:
    import paramiko  # lazy: a slow import, paid at the first connection

    _quiet_paramiko()

    where = f"{target.hostname}:{target.port}"
    transport = paramiko.Transport(sock)
    attempt.hold(transport)
    link = Link(target, transport, below)
    try:
        left = attempt.left(f"SSH handshake with {where}")
        transport.banner_timeout = left
        transport.handshake_timeout = left
        _prefer_known_key_types(transport, known.known_types(target.known_hosts_name))
        try:
            transport.start_client(timeout=left)
        except (paramiko.SSHException, EOFError, OSError) as exc:
            why = str(exc) or type(exc).__name__
            if attempt.expired():  # paramiko's own timeouts say little: name the phase
                why = f"{_stalled_phase(transport)} within {attempt.seconds:g} s"
            raise TransportError(f"SSH handshake with {where} failed: {why}") from exc
        if not getattr(transport, "initial_kex_done", True) or not transport.is_active():
            # start_client returns at its timeout without an error: name the phase it stalled in
            raise TransportError(f"SSH handshake with {where} failed: "
                                 f"{_stalled_phase(transport)} within {attempt.seconds:g} s")
        key = transport.get_remote_server_key()
        if known.check(target.known_hosts_name, key, accept_new=options.accept_new_host_key):
            log.info("added host key for %s to %s", target.known_hosts_name, known.write_to)
        _authenticate(transport, target, options, attempt)
    except BaseException:
        link.close()
        raise
    return link


def _stalled_phase(transport: Any) -> str:
    return "key exchange did not finish" if transport.remote_version else "no SSH banner"


def _candidate_key_files(target: SshTarget, options: SshOptions) -> list[str]:
    explicit = [*options.identity_files, *target.identity_files]
    files = [os.path.expanduser(p) for p in explicit]
    if options.default_identities and not explicit:
        files += [os.path.expanduser(p) for p in _DEFAULT_IDENTITIES]
    return list(dict.fromkeys(files))  # de-duplicated, order kept


def _authenticate(transport: Any, target: SshTarget, options: SshOptions,
                  deadline: Attempt) -> None:
    import paramiko

    user = target.user
    notes: list[str] = []
    tried = 0
    allowed: list[str] | None = None
    phase = f"SSH authentication as {user!r} to {target.dest}"

    def attempt(key: Any, label: str) -> bool:
        nonlocal tried, allowed
        tried += 1
        transport.auth_timeout = deadline.left(phase)  # each request waits at most what is left
        try:
            transport.auth_publickey(user, key)
        except paramiko.BadAuthenticationType as exc:
            allowed = list(exc.allowed_types)
            return False
        except paramiko.AuthenticationException:
            if deadline.expired():  # paramiko's "Authentication timeout.": the server stalled
                raise TransportError(
                    f"{phase}: no answer within {deadline.seconds:g} s") from None
            notes.append(f"{label}: rejected")
            return False
        except (paramiko.SSHException, EOFError, OSError) as exc:
            raise TransportError(f"SSH authentication with {target.dest} failed: {exc}") from exc
        return bool(transport.is_authenticated())

    for path in _candidate_key_files(target, options):
        key = load_key(path, options.identity_files, notes)
        if key is not None and attempt(key, path):
            return
        if allowed is not None and "publickey" not in allowed:
            break
    publickey_ok = allowed is None or "publickey" in allowed
    if options.use_agent and os.environ.get("SSH_AUTH_SOCK") and publickey_ok:
        agent = paramiko.Agent()
        try:
            for agent_key in agent.get_keys():
                if attempt(agent_key, f"agent key {agent_key.get_name()}"):
                    return
        finally:
            agent.close()
    if allowed is not None and "publickey" not in allowed:
        notes.append(
            f"the server accepts only {', '.join(allowed) or 'nothing'}; eagle-tui uses keys "
            "(ssh-agent or --identity FILE)"
        )
    detail = "; ".join(notes) if notes else f"{tried} key(s) offered"
    if tried == 0 and not notes:
        detail = "no key to offer (use --identity FILE or ssh-agent)"
    raise AuthError(f"SSH authentication as {user!r} to {target.dest} failed: {detail}")


class Keepalive(threading.Thread):
    """Pings the server every ``interval`` s and calls ``on_dead(reason)`` once it stops answering.

    ``global_request(..., wait=True)`` has no timeout of its own, so each ping runs in a short
    helper thread and this thread waits for it with a deadline; when the deadline passes the link
    is declared dead (the caller closes it, which also releases the stuck helper).
    """

    def __init__(
        self, link: Link, interval: float, timeout: float, on_dead: Callable[[str], None]
    ) -> None:
        super().__init__(name=f"ssh-keepalive {link.target.dest}", daemon=True)
        self._link = link
        self._interval = interval
        self._timeout = timeout
        self._on_dead = on_dead
        self._stop = threading.Event()

    def stop(self) -> None:
        self._stop.set()

    def run(self) -> None:
        transport = self._link.transport
        next_ping = time.monotonic() + self._interval
        while not self._stop.wait(_ACTIVE_POLL_S):
            # an EOF (killed session, sshd stopped) ends paramiko's transport at once: notice it
            # within 0.1 s even when no channel is open to see it
            if not self._link.is_active():
                self._dead("connection closed")
                return
            if time.monotonic() < next_ping:
                continue
            next_ping = time.monotonic() + self._interval
            done = threading.Event()
            failure: list[str] = []

            def ping(done: threading.Event = done, failure: list[str] = failure) -> None:
                try:
                    transport.global_request("keepalive@openssh.com", wait=True)
                except Exception as exc:  # socket errors surface here as SSHException/EOFError
                    failure.append(str(exc) or type(exc).__name__)
                finally:
                    done.set()

            threading.Thread(target=ping, name="ssh-ping", daemon=True).start()
            if not done.wait(self._timeout):
                self._dead(f"no answer to keepalive within {self._timeout:g} s")
                return
            if failure or not self._link.is_active():
                self._dead(failure[0] if failure else "connection closed")
                return

    def _dead(self, reason: str) -> None:
        if not self._stop.is_set():
            self._on_dead(reason)


__all__ = ["Attempt", "AuthError", "HostKeyError", "Keepalive", "Link", "SshOptions", "open_link"]
