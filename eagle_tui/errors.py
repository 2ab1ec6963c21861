"""The one exception tree of eagle-tui (drawn in docs/architecture.md, "Errors: one tree").

Every error that eagle-tui raises on purpose derives from :class:`EagleError`, so the command
boundary (``cli.main``) can tell "eagle-tui refused or failed" (a one-line message and exit 2)
from a bug. The branches name *where* an error comes from; the leaves live beside the code
that raises them. Anything else that reaches ``cli.main`` is a bug: one line and exit
:data:`EXIT_INTERNAL` (70), never 1, the "crashed" of ``wait`` and the "errors found" of ``lint``.

UsageError, ConfigError and InputError are also ValueErrors, so callers that catch the
ValueError of a bad argument, file or record line keep working; TransportError is not.
``tests/unit/structure/test_errors.py`` checks that every exception class defined in eagle_tui is in
the tree. This module is a leaf: it imports nothing, so every layer (the pure model included) may
use it.
"""

from __future__ import annotations

EXIT_INTERNAL = 70  # a bug of eagle-tui itself (sysexits' EX_SOFTWARE): never 1, "crashed"


class EagleError(Exception):
    """Root of every error eagle-tui raises on purpose (never a bug)."""


class UsageError(EagleError, ValueError):
    """A bad command line or argument value; the command prints it and exits 2."""


class ConfigError(EagleError, ValueError):
    """A config, theme or settings file that cannot be used as written."""


class InputError(EagleError, ValueError):
    """A file or stream that cannot be read as asked (a malformed record line, say)."""


def describe_error(exc: BaseException) -> str:
    """A one-line, user-facing description: the message, else the exception's class name."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    name = type(exc).__name__
    return f"{name}: {text}" if text else name


__all__ = [
    "EXIT_INTERNAL",
    "ConfigError",
    "EagleError",
    "InputError",
    "UsageError",
    "describe_error",
]
