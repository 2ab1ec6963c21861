"""The framing of remote commands (``transport/ssh/frame.py``): whatever a login shell prints
before or after, split anywhere, only the command's own output and status come through."""

from __future__ import annotations

import shlex
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eagle_tui.transport.ssh.frame import Deframer, FrameError, frame

TOKEN = "0123456789abcdef0123456789abcdef"
FAKES = [b"EAGLE-", b"EAGLE-" + TOKEN.encode(), b"EAGLE-" + TOKEN.encode() + b"-BEG",
         b"EAGLE-" + TOKEN.encode() + b"-END", b"\nEAGLE-" + TOKEN.encode() + b"-EN",
         b"EAGLE-ffffffffffffffffffffffffffffffff-BEGIN\n", b"EAGLE-deadbeef-END 0\n",
         b"\n", b"\r\n", b"\x00", b"\x1b]0;title\x07"]

noise = st.lists(st.one_of(st.binary(max_size=40), st.sampled_from(FAKES)),
                 max_size=8).map(b"".join)
payload = st.lists(st.one_of(st.binary(max_size=60), st.sampled_from(FAKES[:5] + FAKES[6:])),
                   max_size=8).map(b"".join)


def _real_marker(data: bytes) -> bool:
    return (b"EAGLE-" + TOKEN.encode() + b"-BEGIN\n") in data or \
        (b"\nEAGLE-" + TOKEN.encode() + b"-END ") in data


def _deliver(d: Deframer, feed: str, data: bytes, cuts: list[int]) -> bytes:
    out = b""
    at = 0
    for cut in sorted({c % (len(data) + 1) for c in cuts} | {len(data)}):
        out += getattr(d, feed)(data[at:cut])
        at = cut
    return out


@settings(max_examples=600, deadline=None)
@given(noise, payload, noise, noise, payload, noise, st.integers(0, 255),
       st.lists(st.integers(0, 10_000), max_size=12), st.booleans())
def test_noise_around_never_corrupts_the_frame(before: bytes, body: bytes, after: bytes,
                                               err_before: bytes, err_body: bytes,
                                               err_after: bytes, code: int,
                                               cuts: list[int], replaces: bool) -> None:
    for part in (before, body, after, err_before, err_body, err_after):
        if _real_marker(part):  # 128 random bits: no shell noise or output holds them
            return
    framed = frame("cmd", token=TOKEN, replaces_shell=replaces)
    begin = f"EAGLE-{TOKEN}-BEGIN\n".encode()
    end = f"\nEAGLE-{TOKEN}-END {code}\n".encode()
    tail_out, tail_err = (b"", b"") if replaces else (end + after, end + err_after)
    d = Deframer(framed)
    out = _deliver(d, "out", before + begin + body + tail_out, cuts)
    err = _deliver(d, "err", err_before + begin + err_body + tail_err, cuts[::-1])
    held_out, held_err, status = d.finish(77, "host")
    assert out + held_out == body
    assert err + held_err == err_body
    assert status == (77 if replaces else code)


def test_a_shell_that_never_runs_the_command_is_a_clear_error() -> None:
    d = Deframer(frame("cmd"))
    d.out(b"Welcome!\n")
    d.err(b"fish: Unsupported use of '='\n")
    with pytest.raises(FrameError, match=r"POSIX shell.*Unsupported use"):
        d.finish(127, "gpu-box")


def test_endless_noise_before_the_command_is_bounded() -> None:
    d = Deframer(frame("cmd"))
    with pytest.raises(FrameError, match="1 MiB"):
        for _ in range(20):
            d.out(b"y\n" * 65536)


@pytest.mark.parametrize("cmd", ["echo hi; printf 'no newline'", "sh -c 'exit 3'", "printf ''",
                                 "cat /nonexistent", "echo -n x >&2"])
def test_the_framed_command_runs_under_sh_with_noise(cmd: str) -> None:
    """The wrapper itself, run by a real POSIX shell with an rc that prints on both streams and
    an exit trap that prints again."""
    rc = "echo rc-out; echo rc-err >&2; trap 'echo trap-out; echo trap-err >&2' EXIT\n"
    framed = frame(cmd)
    shown = subprocess.run(["sh", "-c", rc + framed.text], capture_output=True)
    plain = subprocess.run(["sh", "-c", cmd], capture_output=True)
    d = Deframer(framed)
    out, err = d.out(shown.stdout), d.err(shown.stderr)
    held_out, held_err, code = d.finish(shown.returncode, "here")
    assert (out + held_out, err + held_err, code) == (plain.stdout, plain.stderr,
                                                       plain.returncode)
    # the assembled marker is never in the command line a process listing shows
    assert f"EAGLE-{framed.token}-BEGIN" not in framed.text
    assert shlex.split(framed.text.splitlines()[0])[:2] == ["printf", "EAGLE-%s-BEGIN\\n"]


@pytest.mark.parametrize("cmd", ["seq 1 3", "printf 'a\\nb'", "nonexistent-command-xyz",
                                 "sh -c 'echo e >&2; exit 4'"])
def test_a_command_that_replaces_the_shell_gets_no_trailing_noise(cmd: str) -> None:
    """``replaces_shell``: the login shell's exit trap never runs after the markers, even when
    the command cannot be executed (its ``exec`` fails: 127, the shell's word only)."""
    rc = "echo rc-out; echo rc-err >&2; trap 'echo trap-out; echo trap-err >&2' EXIT\n"
    framed = frame(cmd, replaces_shell=True)
    shown = subprocess.run(["bash", "-c", rc + framed.text], capture_output=True)
    plain = subprocess.run(["sh", "-c", cmd], capture_output=True)
    d = Deframer(framed)
    out, err = d.out(shown.stdout), d.err(shown.stderr)
    held_out, held_err, code = d.finish(shown.returncode, "here")
    assert code == plain.returncode and out + held_out == plain.stdout
    assert b"trap" not in err + held_err and b"rc-" not in err + held_err
    assert (err + held_err == plain.stderr) or (code == 127 and b"not found" in err)
