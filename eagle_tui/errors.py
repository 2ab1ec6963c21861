"""The one exception tree of eagle-tui.

Every error that eagle-tui raises on purpose derives from :class:`EagleError`, so the command
boundary (``cli.main``) can tell "eagle-tui refused or failed" (a one-line message and exit 2)
from a bug (a traceback) without a list of unrelated classes. The branches name *where* the
error comes from; the leaves live beside the code that raises them::

    EagleError
    ├── UsageError          a bad command line or argument value (exit 2)
    ├── ConfigError         a bad config or theme file          (ui/config.py, ui/theme.py)
    ├── InputError          a file or stream that cannot be read as asked (record, log)
    └── TransportError      the host, the connection, a remote command (transport/base.py)
        └── ...             host keys, authentication, lost connections, HTTP sources

This module is a leaf: it imports nothing, so every layer (the pure model included) may use it.
"""

from __future__ import annotations


class EagleError(Exception):
    """Root of every error eagle-tui raises on purpose (never a bug)."""


class UsageError(EagleError, ValueError):
    """A bad command line or argument value; the command prints it and exits 2."""


class ConfigError(EagleError, ValueError):
    """A config, theme or settings file that cannot be used as written."""


class InputError(EagleError, ValueError):
    """A file or stream that cannot be read as asked (a malformed record line, say)."""


__all__ = ["ConfigError", "EagleError", "InputError", "UsageError"]
