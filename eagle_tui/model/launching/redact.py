"""Secrets out of every command line eagle-tui stores or shows.

A launch command carries ``--api-key sk-...`` or ``HF_TOKEN=hf_...`` as often as not, and it is
written to the run history, shown in the dashboard and printed by ``runs show``. Every such
place goes through :func:`redact_words`: values of secret-looking flags and of secret-looking
``KEY=value`` words become ``***``, and so do token-shaped words wherever they stand. The rule
reads the name's words (a flag that counts tokens is not a token).
"""

from __future__ import annotations

import re

from eagle_tui.model.boundary.shellwords import join, split

MASK = "***"
# Secret by the last word of the name (a name ends in what it holds), never a substring:
# ``HF_TOKEN`` and ``--api-key`` are; ``--max-total-tokens``, ``--speculative-token-map`` and
# ``--tokenizer`` are not.
_SECRET_WORDS = frozenset({"token", "key", "apikey", "secret", "password", "passwd", "pwd",
                           "auth"})
_NAME_PARTS = re.compile(r"[^A-Za-z0-9]+")
_TOKEN_SHAPE = re.compile(r"^(?:hf_[A-Za-z0-9]{20,}|sk-[A-Za-z0-9_-]{16,}"
                          r"|gh[pousr]_[A-Za-z0-9]{20,}|xox[baprs]-[A-Za-z0-9-]{10,}"
                          r"|AKIA[0-9A-Z]{16})$")
_ENV_WORD = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.DOTALL)


def is_secret_name(name: str) -> bool:
    """A flag or variable name whose value is a secret (``--api-key``, ``HF_TOKEN``...)."""
    words = [w for w in _NAME_PARTS.split(name.lower()) if w]
    return bool(words) and words[-1] in _SECRET_WORDS


def redact_words(words: list[str] | tuple[str, ...]) -> list[str]:
    """The words with every secret value replaced by ``***`` (see the module docstring)."""
    out: list[str] = []
    hiding = False  # after a secret flag: its values (vLLM's --api-key takes several)
    for w in words:
        if hiding and not w.startswith("-"):
            out.append(MASK)
            continue
        hiding = False
        if w.startswith("-"):
            name, eq, _ = w.partition("=")
            if is_secret_name(name):
                out.append(f"{name}={MASK}" if eq else w)
                hiding = not eq
            else:
                out.append(w)
            continue
        m = _ENV_WORD.match(w)
        if m and is_secret_name(m.group(1)):
            out.append(f"{m.group(1)}={MASK}")
            continue
        out.append(MASK if _TOKEN_SHAPE.match(w) else w)
    return out


def redact_text(command: str) -> str:
    """A whole command string, redacted (split like a shell; unsplittable text is masked)."""
    try:
        words = split(command)
    except ValueError:
        return MASK
    return join(redact_words(words))


__all__ = ["MASK", "is_secret_name", "redact_text", "redact_words"]
