"""The grammar gate: what a value from outside must look like before it becomes an argv word,
an SSH destination or a config lookup.

"Outside" is anything the user did not type or write in their own config: a Prometheus
``instance`` label, a process's command line or log path found by a scan, a discovered port.
Such a value reaches an ``exec``, paramiko's ``SSHConfig.lookup`` (which runs ``Match exec``
lines through a shell with ``%h`` substituted) or a remote command only after one of these
validators returned it; anything else raises :class:`GrammarError` with a one-line reason.
Each validator returns the value unchanged, so a call is both the check and the hand-over.
"""

from __future__ import annotations

import ipaddress
import re

from eagle_tui.errors import InputError
from eagle_tui.model.record import Record, record

_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
_IPV4 = re.compile(r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}")
_USER = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,31}")
_CONTAINER = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9_.-]{0,254}")
_MAX_HOST = 253
_MAX_PATH = 4096


class GrammarError(InputError):
    """A value from outside does not have the shape its use needs (the message says which)."""


def _shown(text: object) -> str:
    """The value in a message: ``repr`` escapes control characters, cut so one line stays one."""
    return repr(text)[:80]


def host_name(text: str) -> str:
    """An RFC 1123 host name (dot-separated labels), an IPv4 address or a bracketed IPv6 one."""
    if not isinstance(text, str) or not text:
        raise GrammarError("empty host name")
    if text.startswith("["):
        inner = text[1:-1] if text.endswith("]") else ""
        try:
            ipaddress.IPv6Address(inner)
        except ValueError:
            raise GrammarError(f"{_shown(text)} is not a bracketed IPv6 address") from None
        return text
    if _IPV4.fullmatch(text):
        try:
            ipaddress.IPv4Address(text)
        except ValueError:
            raise GrammarError(f"{_shown(text)} is not an IPv4 address") from None
        return text
    name = text[:-1] if text.endswith(".") else text
    if len(name) > _MAX_HOST or not all(_LABEL.fullmatch(p) for p in name.split(".")):
        raise GrammarError(f"{_shown(text)} is not a host name (letters, digits, '-' and '.')")
    return text


def user_name(text: str) -> str:
    """A login name: a letter or ``_`` first, then letters, digits, ``_ . -`` (at most 32)."""
    if not isinstance(text, str) or not _USER.fullmatch(text):
        raise GrammarError(f"{_shown(text)} is not a user name")
    return text


def port(value: str | int) -> int:
    """A TCP port, 1-65535, from its decimal digits (no sign, no spaces) or an int."""
    if isinstance(value, bool):
        raise GrammarError(f"{_shown(value)} is not a port")
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 5:
        number = int(value)
    else:
        raise GrammarError(f"{_shown(value)} is not a port (1-65535)")
    if not 0 < number < 65536:
        raise GrammarError(f"{_shown(value)} is not a port (1-65535)")
    return number


def container(text: str) -> str:
    """A docker container name or id: ``[a-zA-Z0-9][a-zA-Z0-9_.-]*`` (hex ids are such names)."""
    if not isinstance(text, str) or not _CONTAINER.fullmatch(text):
        raise GrammarError(f"{_shown(text)} is not a container name or id")
    return text


def remote_path(text: str, *, operand: bool = False) -> str:
    """A path on a host: no NUL, newline or other control character, at most 4096 bytes.

    ``operand=True`` where the path is a command's operand without a ``--`` before it: a
    leading ``-`` would be read as an option there, so it is refused.
    """
    if not isinstance(text, str) or not text:
        raise GrammarError("empty path")
    if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in text):
        raise GrammarError(f"path {_shown(text)} holds a control character")
    if len(text.encode("utf-8", "surrogatepass")) > _MAX_PATH:
        raise GrammarError(f"path {_shown(text)} is longer than {_MAX_PATH} bytes")
    if operand and text.startswith("-"):
        raise GrammarError(f"path {_shown(text)} starts with '-' (it would be an option)")
    return text


@record
class Destination(Record):
    """An SSH destination whose every part passed the grammar."""

    host: str  # without brackets
    user: str | None = None
    port: int | None = None


def destination(text: str) -> Destination:
    """``[user@]host[:port]`` (``[v6]:port`` for IPv6) with each part checked; no aliases
    with other characters, no ``ssh://``, no options."""
    if not isinstance(text, str) or not text:
        raise GrammarError("empty SSH destination")
    user: str | None = None
    rest = text
    if "@" in rest:
        user_text, _, rest = rest.partition("@")
        user = user_name(user_text)
    number: int | None = None
    if rest.startswith("["):
        close = rest.find("]")
        host_text, tail = (rest[:close + 1], rest[close + 1:]) if close > 0 else (rest, "")
        if tail:
            if not tail.startswith(":"):
                raise GrammarError(f"{_shown(text)}: expected ':port' after ']'")
            number = port(tail[1:])
        host = host_name(host_text)[1:-1]
    else:
        host_text, colon, port_text = rest.partition(":")
        host = host_name(host_text)
        if colon:
            number = port(port_text)
    return Destination(host=host, user=user, port=number)


def checked_destination(text: str) -> str:
    """``text`` when :func:`destination` accepts it; the error names the whole destination."""
    try:
        destination(text)
    except GrammarError as exc:
        raise GrammarError(f"SSH destination {_shown(text)} refused: {exc}") from None
    return text


__all__ = ["Destination", "GrammarError", "checked_destination", "container", "destination",
           "host_name", "port", "remote_path", "user_name"]
