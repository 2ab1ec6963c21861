"""Private keys for the SSH link: loaded without ever asking for a passphrase (an encrypted key
is skipped with the advice to add it to ssh-agent)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from eagle_tui.files import open_regular


def load_key(path: str, named: Iterable[str], notes: list[str]) -> Any | None:
    """The private key at ``path``, or None with the reason in ``notes`` (a missing file only
    when the user named it: ``named`` are the identity files given on the command line)."""
    import paramiko

    if not os.path.isfile(path):
        if path in (os.path.expanduser(p) for p in named):
            notes.append(f"{path}: no such file")
        return None
    try:
        return paramiko.PKey.from_path(path)
    except paramiko.PasswordRequiredException:
        notes.append(f"{path}: encrypted (add it to ssh-agent: ssh-add {path})")
        return None
    except TypeError as exc:
        # paramiko 5 (through cryptography) raises TypeError, not PasswordRequiredException,
        # for an encrypted new-format OpenSSH or PEM key loaded without a passphrase
        if is_encrypted_key(path) or "password" in str(exc).lower():
            notes.append(f"{path}: encrypted (add it to ssh-agent: ssh-add {path})")
        else:
            notes.append(f"{path}: unreadable key ({exc})")
        return None
    except (paramiko.SSHException, OSError, ValueError) as exc:
        notes.append(f"{path}: unreadable key ({exc})")
        return None


def is_encrypted_key(path: str) -> bool:
    """Does the private key file at ``path`` need a passphrase? (read from the file itself:
    a PEM ``ENCRYPTED`` header, or a new-format OpenSSH key whose cipher is not ``none``)."""
    import base64
    import binascii

    try:
        with open_regular(path) as fh:
            head = fh.read(64 << 10)
    except (OSError, ValueError):
        return False
    if b"ENCRYPTED" in head.split(b"\n\n", 1)[0]:
        return True  # "Proc-Type: 4,ENCRYPTED" or "BEGIN ENCRYPTED PRIVATE KEY"
    begin, end = b"-----BEGIN OPENSSH PRIVATE KEY-----", b"-----END OPENSSH PRIVATE KEY-----"
    if begin not in head or end not in head:
        return False
    body = head.split(begin, 1)[1].split(end, 1)[0]
    try:
        blob = base64.b64decode(b"".join(body.split()), validate=False)
    except (binascii.Error, ValueError):
        return False
    magic = b"openssh-key-v1\0"
    if not blob.startswith(magic) or len(blob) < len(magic) + 4:
        return False
    n = int.from_bytes(blob[len(magic):len(magic) + 4], "big")
    cipher = blob[len(magic) + 4:len(magic) + 4 + n]
    return cipher not in (b"", b"none")
