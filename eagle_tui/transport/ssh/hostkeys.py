"""Strict host-key checking, like OpenSSH's ``StrictHostKeyChecking yes`` / ``accept-new``.

Why not paramiko's ``SSHClient`` policies: its ``RejectPolicy`` message does not show the
fingerprint or say how to accept, and ``AutoAddPolicy`` would also accept a *changed* key if the
caller were careless. Checking by hand after the key exchange keeps the three cases apart:

* known and equal → go on;
* known but different (same key type) → always refused, whatever the flags say: that is what a
  man-in-the-middle looks like, or a reinstalled host the user must confirm with ``ssh-keygen -R``;
* unknown → refused with the SHA256 fingerprint and the way to accept it, unless
  ``accept_new`` is set, in which case the key is appended to the known_hosts file (as OpenSSH's
  ``accept-new`` does) and the connection proceeds.

Known keys are read from ``~/.ssh/known_hosts`` plus every ``--known-hosts FILE``; hashed entries
(``|1|...``) work because paramiko's :class:`HostKeys` understands them.
"""

from __future__ import annotations

import base64
import hashlib
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eagle_tui.files import file_kind, open_regular, read_text
from eagle_tui.transport.base import HostKeyError, TransportError

_write_lock = threading.Lock()


def fingerprint(key: Any) -> str:
    """OpenSSH's ``SHA256:...`` fingerprint of a paramiko key (as ``ssh-keygen -l`` shows it)."""
    digest = hashlib.sha256(key.asbytes()).digest()
    return "SHA256:" + base64.b64encode(digest).decode("ascii").rstrip("=")


def default_known_hosts() -> Path:
    return Path(os.path.expanduser("~/.ssh/known_hosts"))


class KnownHosts:
    """The union of several known_hosts files, and the one file new keys are written to."""

    def __init__(self, files: Sequence[Path], write_to: Path) -> None:
        from paramiko.hostkeys import HostKeys  # lazy: paramiko is a slow import

        self.files = tuple(files)
        self.write_to = write_to
        self._keys = HostKeys()
        self.skipped = 0  # lines OpenSSH would skip too (malformed, @cert-authority, @revoked)
        for path in self.files:
            if path.is_file():
                self._load(path)

    def _load(self, path: Path) -> None:
        """Like OpenSSH, skip a line that cannot be parsed instead of rejecting the file
        (paramiko's ``HostKeys.load`` raises on the first bad base64)."""
        from paramiko.hostkeys import HostKeyEntry

        try:
            text = read_text(path, errors="replace")
        except (OSError, ValueError) as exc:
            raise TransportError(f"cannot read known_hosts file {path}: {exc}") from exc
        for lineno, line in enumerate(text.splitlines(), 1):
            stripped = line.strip()
            if not stripped or stripped.startswith(("#", "@")):
                self.skipped += stripped.startswith("@")
                continue
            try:
                entry = HostKeyEntry.from_line(stripped, lineno)
            except Exception:  # bad base64, unknown key type
                entry = None
            if entry is None or entry.key is None:
                self.skipped += 1
                continue
            for name in entry.hostnames:
                self._keys.add(name, entry.key.get_name(), entry.key)

    def known_types(self, name: str) -> list[str]:
        """Key types recorded for ``name`` (so the key exchange can prefer them)."""
        entry = self._keys.lookup(name)
        return list(entry.keys()) if entry else []

    def check(self, name: str, key: Any, *, accept_new: bool) -> bool:
        """Raise :class:`HostKeyError` unless ``key`` is known for ``name`` (or newly accepted).

        Returns True when the key was newly added to :attr:`write_to`.
        """
        entry = self._keys.lookup(name)
        key_type = key.get_name()
        fp = fingerprint(key)
        if entry is not None and key_type in entry:
            if entry[key_type] == key:
                return False
            raise HostKeyError(
                f"REMOTE HOST KEY CHANGED for {name}: the server sent {key_type} {fp}, which is "
                f"not the key recorded in {self._where()}. This can mean someone is intercepting "
                "the connection, or the host was reinstalled. Refusing to connect (this is never "
                "accepted automatically). If you know the host key changed, remove the old one "
                f"with: ssh-keygen -R '{name}'"
            )
        if not accept_new:
            other = f" (known keys of other types: {', '.join(entry.keys())})" if entry else ""
            raise HostKeyError(
                f"unknown host key for {name}: {key_type} {fp}{other}. Refusing to connect. "
                "Check this fingerprint with the host's administrator (on the host: "
                "ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub), then accept it with "
                "--accept-new-host-key, or connect once with plain `ssh` to add it to "
                f"{self.write_to}."
            )
        self._append(name, key)
        return True

    def _where(self) -> str:
        existing = [str(p) for p in self.files if p.is_file()]
        return ", ".join(existing) or "known_hosts"

    def _append(self, name: str, key: Any) -> None:
        line = f"{name} {key.get_name()} {key.get_base64()}\n"
        path = self.write_to
        with _write_lock:
            try:
                path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                needs_newline = False
                if path.is_file() and path.stat().st_size > 0:
                    with open_regular(path) as fh:
                        fh.seek(-1, os.SEEK_END)
                        needs_newline = fh.read(1) != b"\n"
                # non-blocking: opening a FIFO to write waited for a reader for ever
                fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK,
                             0o600)
                with os.fdopen(fd, "a", encoding="ascii") as fh:
                    kind = file_kind(os.fstat(fd).st_mode)
                    if kind:
                        raise ValueError(f"not a regular file ({kind})")
                    os.set_blocking(fd, True)
                    fh.write(("\n" if needs_newline else "") + line)
            except (OSError, ValueError) as exc:
                raise TransportError(f"cannot add the host key to {path}: {exc}") from exc
        self._keys.add(name, key.get_name(), key)


__all__ = ["KnownHosts", "default_known_hosts", "fingerprint"]
