"""The dashboard's command editor, its model side: secrets put back into an edited command, and
the lint's findings as the editor lists them.

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

from eagle_tui.model.launching.lint import Finding
from eagle_tui.model.launching.redact import MASK, redact_words


def restore_secrets(edited: list[str], original: list[str]) -> list[str]:
    """The edited words with each ``***`` the editor showed put back to the original secret.

    The editor shows the command redacted (``--api-key ***``): a secret never reaches the
    screen. A masked word left as it was means "keep the value". Each mask goes back to the
    secret of the same flag (the option it follows: the editor's lines may be moved about);
    a mask whose flag was renamed or removed gets the secrets left over, in order.
    """
    shown = redact_words(original)
    slots = [(_owner(shown, k), masked, real)
             for k, (masked, real) in enumerate(zip(shown, original, strict=True))
             if masked != real]
    used = [False] * len(slots)

    def take(word: str, owner: str | None) -> str | None:
        for i, (slot_owner, masked, real) in enumerate(slots):
            if not used[i] and masked == word and (owner is None or slot_owner == owner):
                used[i] = True
                return real
        return None

    out: list[str | None] = [take(w, _owner(edited, k)) if MASK in w else w
                             for k, w in enumerate(edited)]
    return [w if w is not None else _or(take(edited[k], None), edited[k])
            for k, w in enumerate(out)]


def _or(value: str | None, default: str) -> str:
    return default if value is None else value


def _owner(words: list[str], k: int) -> str:
    """The option the word at ``k`` is a value of (the nearest option before it), or ``""``."""
    for w in reversed(words[:k]):
        if w.startswith("-"):
            return w.partition("=")[0]
    return ""


def finding_lines(findings: Sequence[Finding]) -> tuple[str, ...]:
    """One line per finding, errors first: ``error: ... (fix: ...)``."""
    order = {"error": 0, "warning": 1, "info": 2}
    ranked = sorted(findings, key=lambda f: order.get(f.level, 3))
    return tuple(f"{f.level}: {f.message}" + (f" (fix: {f.fix})" if f.fix else "")
                 for f in ranked if f.level != "info")


__all__ = ["finding_lines", "restore_secrets"]
