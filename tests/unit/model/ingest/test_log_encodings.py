"""A log in UTF-16 or UTF-32 (or UTF-8 with a byte-order mark) reads as its UTF-8 original.

Before: a UTF-16 log read as "unknown, crash: none" with no hint (a NUL beside every ASCII
character: no pattern matched). Now its first bytes name the encoding (a BOM, or the NUL
pattern of ASCII text without one) and ``report``, ``replay`` and the live tail decode it: the
same summary, the same events, as the UTF-8 file. Text generated in each encoding.
"""

from __future__ import annotations

import asyncio
import codecs
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eagle_tui.model.events import LogLine
from eagle_tui.model.ingest.textenc import RawOffsets, Transcoder, sniff
from eagle_tui.sources.logtail import LogTail
from eagle_tui.transport.local import LocalTransport
from tests.support.paths import REPO

ROOT = REPO
SAMPLES = ROOT / "tests" / "fixtures" / "samples"
WAIT_CRASH = ROOT / "tests" / "fixtures" / "wait" / "sglang-oom-cuda-graph.log"
# (how the file is written, the label the sniffer gives, a BOM written?)
ENCODINGS = {
    "utf-8-sig": "UTF-8 with a byte-order mark",
    "utf-16": "UTF-16 LE",  # Python writes a BOM and little-endian
    "utf-16-le": "UTF-16 LE",
    "utf-16-be": "UTF-16 BE",
    "utf-32": "UTF-32 LE",
    "utf-32-le": "UTF-32 LE",
    "utf-32-be": "UTF-32 BE",
}
BOM_BE = {"utf-16-be+bom": (codecs.BOM_UTF16_BE, "utf-16-be", "UTF-16 BE"),
          "utf-32-be+bom": (codecs.BOM_UTF32_BE, "utf-32-be", "UTF-32 BE")}


def _encode(text: str, name: str) -> bytes:
    if name in BOM_BE:
        bom, codec, _ = BOM_BE[name]
        return bom + text.encode(codec)
    return text.encode(name)


ALL = [*ENCODINGS, *BOM_BE]
LABEL = {**ENCODINGS, **{k: v[2] for k, v in BOM_BE.items()}}


def _eagle(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1",
           "EAGLE_TUI_DATA_DIR": str(cwd / "data")}
    return subprocess.run([sys.executable, "-m", "eagle_tui", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


# ---------------------------------------------------------------- the sniffer and the decoder

lines = st.lists(st.text(st.characters(codec="utf-8", exclude_categories=("Cs",),
                                       exclude_characters="\n\r"), max_size=40),
                 min_size=1, max_size=30)


@settings(max_examples=150, deadline=None)
@given(body=lines, name=st.sampled_from(ALL),
       cuts=st.lists(st.integers(1, 17), min_size=1, max_size=40))
def test_generated_text_decodes_to_its_utf8_in_any_pieces(body: list[str], name: str,
                                                          cuts: list[int]) -> None:
    """A BOM'd encoding is always named; the decoded bytes, however the raw bytes are cut into
    reads, are the text's UTF-8."""
    text = "[2026-01-01 00:00:00] INFO start\n" + "\n".join(body) + "\n"
    raw = _encode(text, name)
    enc = sniff(raw[:64])
    if name in ("utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"):
        assert enc is not None and enc.label == LABEL[name]  # ASCII first line: NUL pattern
    else:
        assert enc is not None and enc.label == LABEL[name]
    coder = Transcoder(enc)
    out, at, i = bytearray(), 0, 0
    while at < len(raw):
        step = cuts[i % len(cuts)]
        out += coder.feed(raw[at:at + step])
        at, i = at + step, i + 1
    out += coder.finish()
    assert bytes(out) == text.encode("utf-8")


@settings(max_examples=150, deadline=None)
@given(body=st.lists(st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)),
                             max_size=80), max_size=10))
def test_plain_utf8_is_never_taken_for_another_encoding(body: list[str]) -> None:
    raw = ("\n".join(body)).encode("utf-8")
    if b"\x00" not in raw and not raw.startswith(codecs.BOM_UTF8):
        assert sniff(raw[:64]) is None


def test_zeros_and_binary_are_not_an_encoding() -> None:
    assert sniff(bytes(64)) is None  # a sparse file
    assert sniff(b"\x00\x01" * 3) is None  # too short to tell
    assert sniff(bytes(range(64))) is None


@settings(max_examples=100, deadline=None)
@given(body=lines, name=st.sampled_from(ALL), upto=st.integers(0, 30))
def test_raw_offsets_map_a_line_boundary_back_to_the_files_bytes(body: list[str], name: str,
                                                                 upto: int) -> None:
    text = "[2026-01-01 00:00:00] INFO start\n" + "\n".join(body) + "\n"
    raw = _encode(text, name)
    enc = sniff(raw[:64])
    assert enc is not None
    offsets = RawOffsets(enc, raw=enc.bom)
    coder = Transcoder(enc)
    offsets.fed(coder.feed(raw) + coder.finish())
    kept = text.splitlines(keepends=True)[: upto + 1]
    utf8 = sum(len(k.encode("utf-8")) for k in kept)
    offsets.advance(utf8)
    assert offsets.resume() == enc.bom + len("".join(kept).encode(enc.plain))


# ---------------------------------------------------------------- report, replay, wait, tail

def _written(tmp: Path, source: Path, name: str) -> Path:
    out = tmp / f"{source.stem}.{name}.log"
    out.write_bytes(_encode(source.read_text(encoding="utf-8"), name))
    return out


@pytest.mark.parametrize("name", ALL)
def test_report_gives_the_utf8_summary(tmp_path: Path, name: str) -> None:
    source = SAMPLES / "sglang-eagle3-launch-decode.log"
    base = _eagle("report", "--json", str(source), cwd=tmp_path)
    got = _eagle("report", "--json", str(_written(tmp_path, source, name)), cwd=tmp_path)
    assert base.returncode == got.returncode == 0, got.stderr
    a, b = json.loads(base.stdout), json.loads(got.stdout)
    assert b.pop("encoding") == f"this log is {LABEL[name]}; eagle-tui decoded it to UTF-8"
    a.pop("file"), b.pop("file")
    assert a == b
    text = _eagle("report", str(_written(tmp_path, source, name)), cwd=tmp_path).stdout
    assert f"encoding: this log is {LABEL[name]}" in text


@pytest.mark.parametrize("name", ["utf-16", "utf-32-be+bom"])
def test_report_of_stdin_is_decoded_too(tmp_path: Path, name: str) -> None:
    source = SAMPLES / "sglang-eagle3-launch-decode.log"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}

    def report(data: bytes) -> dict[str, object]:
        proc = subprocess.run([sys.executable, "-m", "eagle_tui", "report", "--json", "-"],
                              input=data, cwd=tmp_path, env=env, capture_output=True,
                              timeout=120, check=True)
        out: dict[str, object] = json.loads(proc.stdout)
        return out

    base = report(source.read_bytes())
    got = report(_encode(source.read_text(encoding="utf-8"), name))
    assert got.pop("encoding") == f"this log is {LABEL[name]}; eagle-tui decoded it to UTF-8"
    assert base == got


@pytest.mark.parametrize("name", ["utf-16", "utf-32-be"])
def test_replay_and_wait_read_the_log_decoded(tmp_path: Path, name: str) -> None:
    source = SAMPLES / "sglang-eagle3-launch-decode.log"
    base = _eagle("replay", str(source), "--headless", cwd=tmp_path)
    got = _eagle("replay", str(_written(tmp_path, source, name)), "--headless", cwd=tmp_path)
    assert base.returncode == got.returncode == 0, got.stderr
    def steady(out: str) -> str:  # the wall-clock seconds differ from run to run
        return re.sub(r"\d+\.\d+\s?s\b", "Ns", out)

    assert steady(base.stdout) == steady(got.stdout)
    crash = _written(tmp_path, WAIT_CRASH, name)
    waited = _eagle("wait", "--log", str(crash), "--timeout", "20", cwd=tmp_path)
    assert waited.returncode == 1, waited.stdout + waited.stderr  # crashed, as the UTF-8 log


async def _tail_lines(path: Path, tail: LogTail | None = None, until: int = 0) -> list[str]:
    tail = tail or LogTail(LocalTransport(poll_interval=0.01), str(path), caught_up_gap=0.05)
    got: list[str] = []

    async def run() -> None:
        async for item in tail.events():
            for ev in item if isinstance(item, list) else [item]:
                if type(ev) is LogLine:
                    got.append(ev.text)
            if len(got) >= until:
                return

    await asyncio.wait_for(run(), 20)
    return got


@pytest.mark.parametrize("name", ["utf-8-sig", "utf-16-le", "utf-16", "utf-32-be+bom"])
async def test_live_tail_decodes_and_resumes_at_the_right_byte(tmp_path: Path,
                                                               name: str) -> None:
    text = "".join(f"[2026-01-01 00:00:{i % 60:02d}] INFO line {i} é ✓ \U0001F600\n"
                   for i in range(200))
    want = text.splitlines()
    path = tmp_path / "server.log"
    raw = _encode(text, name)
    half = len(_encode("".join(text.splitlines(keepends=True)[:120]), name))  # (with the mark)
    path.write_bytes(raw[:half])
    tail = LogTail(LocalTransport(poll_interval=0.01), str(path), caught_up_gap=0.05)
    first = await _tail_lines(path, tail, until=120)
    assert tail.encoding is not None
    assert tail.offset == half  # the raw byte after the last line handed out
    with path.open("ab") as fh:  # (a test writing its own log)
        fh.write(raw[half:])
    rest = await _tail_lines(path, tail, until=80)  # the source retried: resumes there
    assert first + rest == want
