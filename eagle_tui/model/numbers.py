"""Strict number tokens: a number is read whole and finite, or not at all.

``float()`` and friends accept more than a log or an exposition means by a number: ``1_0`` is
10, ``1e999`` is ``inf``, ``nan`` is a float, and a regex that matched ``\\d+(\\.\\d+)?`` at the
start of ``1e999`` or ``0x10`` would read ``1.0`` and ``0.0`` from them. Here a token is a
number only when *all* of it is ``[+-]digits[.digits][e[+-]digits]`` (at most
:data:`MAX_TOKEN` characters: a 400-digit value is not a measurement) and its value is finite.
Anything else is ``None``, which every caller treats as "not a reading": skipped, never fatal.

:func:`display_clamp` bounds a value that *is* a number but absurd for what it measures
(a ``/server_info`` memory of 1e308 GB) before it is shown.

Pure: stdlib only.
"""

from __future__ import annotations

import math
import re

MAX_VALUE = 1e15  # larger than any count, rate or token total a server reaches: not a reading
MAX_TOKEN = 64  # characters: 17 significant digits, a sign, an exponent, and room to spare
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,4})?")
_INT = re.compile(r"[+-]?[0-9]{1,18}")


def strict_float(token: str | bytes) -> float | None:
    """The finite float that all of ``token`` spells (surrounding blanks allowed), else None.

    ``"2.5"`` → 2.5; ``"1e999"``, ``"0x10"``, ``"1_0"``, ``"nan"``, ``"inf"``, ``"1.2.3"``,
    a 400-digit token → None.
    """
    text = token.decode("ascii", "replace") if isinstance(token, bytes) else token
    text = text.strip()
    if len(text) > MAX_TOKEN or _NUMBER.fullmatch(text) is None:
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def strict_int(token: str | bytes) -> int | None:
    """The int that all of ``token`` spells, at most 18 digits (no ``_``, no ``0x``), else None."""
    text = token.decode("ascii", "replace") if isinstance(token, bytes) else token
    text = text.strip()
    return int(text) if _INT.fullmatch(text) else None


def finite(value: object, limit: float = 1e15) -> float | None:
    """``value`` as a float when it is an int or float (not a bool), finite and within
    ``±limit``; else None (JSON gives ints of any size and floats up to 1e308)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, int) and abs(value) > limit:
        return None
    fval = float(value)
    return fval if math.isfinite(fval) and abs(fval) <= limit else None


def display_clamp(value: float, low: float, high: float) -> float | None:
    """``value`` when ``low <= value <= high`` (what the quantity can be), else None: an absurd
    reading is not shown as if it were one."""
    return value if math.isfinite(value) and low <= value <= high else None


__all__ = ["MAX_TOKEN", "MAX_VALUE", "display_clamp", "finite", "strict_float", "strict_int"]
