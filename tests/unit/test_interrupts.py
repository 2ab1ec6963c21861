"""``eagle_tui.interrupts``: a Ctrl-C that lands where Python ignores exceptions is not lost.

Each case raises ``KeyboardInterrupt`` in one of the places whose exceptions CPython only
prints as "Exception ignored" (a ``__del__``, a weakref callback as the import system's module
locks have, a ``gc`` callback), then keeps working for seconds: with the hook the interrupt
comes again in the main code at once, without it the program finishes its work.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.procs import sigint_as_at_a_terminal

ROOT = Path(__file__).resolve().parents[2]

PLACES = {
    "__del__": "class X:\n    def __del__(self):\n        raise KeyboardInterrupt\nX()\n",
    "weakref callback": ("import weakref\nclass X: pass\nx = X()\n"
                         "def cb(_r):\n    raise KeyboardInterrupt\n"
                         "r = weakref.ref(x, cb)\ndel x\n"),
    "gc callback": ("import gc\n"
                    "def cb(phase, info):\n"
                    "    if phase == 'stop':\n"
                    "        gc.callbacks.remove(cb)\n"
                    "        raise KeyboardInterrupt\n"
                    "gc.callbacks.append(cb)\ngc.collect()\n"),
}

PROGRAM = """
import sys, time
{install}
try:
{place}
    end = time.monotonic() + 5
    while time.monotonic() < end:
        sum(range(1000))
    print("finished")
except KeyboardInterrupt:
    print("interrupted")
"""


def _run(place: str, install: bool) -> subprocess.CompletedProcess[str]:
    body = "\n".join("    " + line for line in place.splitlines())
    code = PROGRAM.format(install="import eagle_tui.interrupts" if install else "", place=body)
    # (as started from a terminal: a background job's children start with SIGINT ignored,
    # and the hook sends a Ctrl-C, which an ignored SIGINT drops)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=30, cwd=ROOT, check=False, preexec_fn=sigint_as_at_a_terminal)


@pytest.mark.parametrize("place", sorted(PLACES))
def test_a_swallowed_ctrl_c_comes_again(place: str) -> None:
    done = _run(PLACES[place], install=True)
    assert done.stdout.strip() == "interrupted", done
    assert "Exception ignored" not in done.stderr and "Traceback" not in done.stderr


def test_without_the_hook_python_loses_it() -> None:
    """The premise (so the test above can fail): CPython's own hook prints and goes on."""
    done = _run(PLACES["__del__"], install=False)
    assert done.stdout.strip() == "finished" and "Exception ignored" in done.stderr


def test_other_unraisable_exceptions_keep_pythons_report() -> None:
    done = _run("class X:\n    def __del__(self):\n        raise ValueError('boom')\nX()\n",
                install=True)
    assert done.stdout.strip() == "finished"
    assert "Exception ignored" in done.stderr and "boom" in done.stderr
