"""Turn what the user typed after ``--ssh`` into a concrete SSH target.

``DEST`` is ``[user@]host[:port]`` (also ``[user@][v6addr]:port`` and ``ssh://user@host:port``)
or a ``Host`` alias from ``~/.ssh/config``. The alias is resolved with paramiko's own
:class:`paramiko.config.SSHConfig` so the rules (first value wins, ``Match``, ``%h`` tokens) are
the ones OpenSSH users expect: ``HostName``, ``User``, ``Port``, ``IdentityFile`` and
``ProxyJump`` are honoured. A user or port written in ``DEST`` wins over the config file, as with
``ssh``. Jump hosts are resolved through the same config (OpenSSH does the same), so a
``ProxyJump bastion`` whose ``bastion`` is itself an alias works.

More in docs/architecture.md, "Module notes", ``transport/ssh/config``.
"""

from __future__ import annotations

import getpass
import os
from dataclasses import dataclass
from pathlib import Path

from eagle_tui.model.boundary.grammar import GrammarError, checked_destination
from eagle_tui.transport.base import TransportError

DEFAULT_PORT = 22
_MAX_JUMPS = 8


class DestinationError(TransportError):
    """``--ssh DEST`` could not be understood (empty host, bad port, unreadable config)."""


@dataclass(frozen=True, slots=True)
class SshTarget:
    """A resolved destination: where to connect, as whom, with which keys, through which jumps."""

    dest: str  # what the user typed: shown in the UI and in messages
    hostname: str
    port: int
    user: str
    identity_files: tuple[str, ...] = ()
    jumps: tuple[SshTarget, ...] = ()

    @property
    def known_hosts_name(self) -> str:
        """The name OpenSSH writes into known_hosts: ``host`` on port 22, else ``[host]:port``."""
        if self.port == DEFAULT_PORT:
            return self.hostname
        return f"[{self.hostname}]:{self.port}"

    @property
    def display(self) -> str:
        return f"{self.user}@{self.hostname}:{self.port}"


@dataclass(frozen=True, slots=True)
class ParsedDest:
    """``DEST`` split into its parts; ``None`` means "not given, ask the config"."""

    host: str
    user: str | None = None
    port: int | None = None


def parse_dest(dest: str) -> ParsedDest:
    """Split ``[user@]host[:port]``; raises :class:`DestinationError` with the reason."""
    text = dest.strip()
    if text.startswith("ssh://"):
        text = text[len("ssh://") :].rstrip("/")
    if not text:
        raise DestinationError("empty SSH destination (expected [user@]host[:port])")
    if any(c.isspace() for c in text) or "\x00" in text:
        raise DestinationError(f"SSH destination {dest!r} contains whitespace")
    user: str | None = None
    if "@" in text:
        user, _, text = text.rpartition("@")
        if not user:
            raise DestinationError(f"SSH destination {dest!r} has an empty user name")
    port_text: str | None = None
    if text.startswith("["):
        # [v6addr]:port or [host]:port (known_hosts style)
        end = text.find("]")
        if end < 0:
            raise DestinationError(f"SSH destination {dest!r}: missing ']'")
        host, rest = text[1:end], text[end + 1 :]
        if rest:
            if not rest.startswith(":"):
                raise DestinationError(f"SSH destination {dest!r}: expected ':port' after ']'")
            port_text = rest[1:]
    elif text.count(":") == 1:
        host, _, port_text = text.partition(":")
    else:
        host = text  # a bare IPv6 address has several colons and no port
    if not host:
        raise DestinationError(f"SSH destination {dest!r} has no host")
    port: int | None = None
    if port_text is not None:
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise DestinationError(f"SSH destination {dest!r}: port {port_text!r} is not 1-65535")
        port = int(port_text)
    return ParsedDest(host=host, user=user, port=port)


def default_config_path() -> Path:
    return Path(os.path.expanduser("~/.ssh/config"))


def _load_config(path: Path | None, *, outside: bool = False) -> object | None:
    """The parsed config, or ``None`` when there is no file (a missing file is not an error).

    ``outside``: without its ``Match ... exec`` blocks (see the module's docstring).
    """
    if path is None or not path.is_file():
        return None
    from paramiko.config import SSHConfig  # lazy: a command that never connects skips paramiko

    try:
        config = SSHConfig.from_path(str(path))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DestinationError(f"cannot read SSH config {path}: {exc}") from exc
    except Exception as exc:  # paramiko raises its own ConfigParseError for bad lines
        raise DestinationError(f"cannot parse SSH config {path}: {exc}") from exc
    if outside:
        _drop_match_exec(config, path)
    return config


def _drop_match_exec(config: object, path: Path) -> None:
    """Remove every block whose ``Match`` has an ``exec`` criterion (negated or not): such a
    block is treated as not matching, as OpenSSH treats a command that fails. paramiko keeps
    its parsed blocks in ``_config``; if that ever changes, refuse rather than run commands."""
    blocks = getattr(config, "_config", None)
    if not isinstance(blocks, list) or not all(isinstance(b, dict) for b in blocks):
        raise DestinationError(f"cannot read SSH config {path} without running its Match exec")
    blocks[:] = [b for b in blocks
                 if not any(m.get("type") == "exec" for m in b.get("matches") or ())]


def resolve(
    dest: str,
    config_path: Path | None = None,
    *,
    use_config: bool = True,
    outside: bool = False,
    _depth: int = 0,
) -> SshTarget:
    """Resolve ``dest`` (a ``DEST`` or an alias) into an :class:`SshTarget`.

    ``config_path`` defaults to ``~/.ssh/config``; ``use_config=False`` ignores any config file
    (tests, or a user who wants exactly what they typed). ``outside=True``: ``dest`` did not
    come from the user (see the module's docstring).
    """
    if _depth > _MAX_JUMPS:
        raise DestinationError(f"ProxyJump chain for {dest!r} is longer than {_MAX_JUMPS} hops")
    if outside and _depth == 0:
        try:
            checked_destination(dest)
        except GrammarError as exc:
            raise DestinationError(str(exc)) from None
    parsed = parse_dest(dest)
    path = (config_path or default_config_path()) if use_config else None
    config = _load_config(path, outside=outside)
    options: dict[str, object] = {}
    if config is not None:
        try:
            options = dict(config.lookup(parsed.host))  # type: ignore[attr-defined]
        except Exception as exc:  # Match exec failures, bad tokens
            raise DestinationError(f"SSH config lookup for {parsed.host!r} failed: {exc}") from exc

    hostname = str(options.get("hostname") or parsed.host)
    user = parsed.user or _str_opt(options.get("user")) or getpass.getuser()
    port = parsed.port
    if port is None:
        raw_port = _str_opt(options.get("port"))
        if raw_port is None:
            port = DEFAULT_PORT
        elif raw_port.isdigit() and 0 < int(raw_port) < 65536:
            port = int(raw_port)
        else:
            raise DestinationError(f"SSH config for {parsed.host!r}: bad Port {raw_port!r}")
    identity = options.get("identityfile") or []
    identity_files = tuple(
        os.path.expanduser(str(p)) for p in (identity if isinstance(identity, list) else [identity])
    )
    jumps: tuple[SshTarget, ...] = ()
    proxy_jump = _str_opt(options.get("proxyjump"))
    if proxy_jump and proxy_jump.lower() != "none":
        jumps = tuple(
            resolve(hop.strip(), config_path, use_config=use_config, outside=outside,
                    _depth=_depth + 1)
            for hop in proxy_jump.split(",")
            if hop.strip()
        )
    return SshTarget(
        dest=dest,
        hostname=hostname,
        port=port,
        user=user,
        identity_files=identity_files,
        jumps=jumps,
    )


def _str_opt(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, list):
        return str(value[0]) if value else None
    return str(value)


__all__ = ["DestinationError", "ParsedDest", "SshTarget", "parse_dest", "resolve"]
