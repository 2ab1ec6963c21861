"""The report's compiled scan for lines a plain run leaves out (``report.plainscan``) finds
exactly the newlines ``re`` finds with ``NON_PLAIN_AFTER_NL``, on generated lines near every
plain shape, on the mixed log, and once its candidates stop being rare."""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from eagle_tui.model.ingest.classify import NON_PLAIN_AFTER_NL
from eagle_tui.model.ingest.parser import split_lines
from eagle_tui.report.plainscan import MISSES, special_starts
from tests.unit.report.test_report_mixed import mixed_log


def _by_re(data: bytes) -> list[int]:
    return [m.start() for m in NON_PLAIN_AFTER_NL.finditer(data, 0, len(data) - 1)]


def _by_scan(data: bytes) -> list[int]:
    return list(special_starts(data, 0, len(data) - 1, NON_PLAIN_AFTER_NL))


_start = st.sampled_from([
    "[2025-11-20 10:16:03] ", "[2025-11-20 10:16:03 TP0] ", "[04:40:55] ", "[04:40:55 DP1 TP0] ",
    "[2025-11-20 10:16:0", "[2025-11-2x 10:16:03] ", "[1234567] ", "[EAGLE3-DEBUG]", "[EAGLE3-DEBU",
    "[EAGLE3-debug]", "[04:40:55 TP0] ", "[2025-11-20 10:16:03 TP12] ", "[04:40:5",
    "[04:40:55 TP] ",
    "[2025-11-20 10:16:03 TP0 EP1] ", "[04:40:55 TPx] ", "INFO:     1", "INFO:     ",
    "INFO:    1", "(APIServer pid=7) INFO:     1",
    "", " ", "[", "I", "\u00e9", "\x1b[0m", "\r",
])
_kind = st.sampled_from(["Decode batch", "Decode batc", "Prefill batch", "INFO:     2",
                         "INFO:     x", "[EAGLE3-DEBUG]", "[EAGLE3-DEBUG", "x", "", " batch"])
_line = st.builds(lambda s, k, t: s + k + t, _start, _kind,
                  st.text(alphabet=st.sampled_from(list("ab ,:]0\u00e9")), max_size=8))


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_line, min_size=1, max_size=40))
@example(["[2025-11-20 10:16:03] Decode batch, x", ""])  # an empty last line
@example(["[2025-11-20 10:16:03] Decode batch"] * 3 + ["INFO:"])  # a short last line
def test_the_scan_finds_what_re_finds(lines: list[str]) -> None:
    data = ("\n" + "\n".join(lines) + "\n").encode()
    assert _by_scan(data) == _by_re(data)
    assert list(split_lines(data, 1, len(data), NON_PLAIN_AFTER_NL, special_starts)) == \
        list(split_lines(data, 1, len(data), NON_PLAIN_AFTER_NL))


def test_the_mixed_log_and_many_plain_candidates() -> None:
    data = b"\n" + mixed_log(3000, seed=7)
    assert _by_scan(data) == _by_re(data)
    # tagged stamps are plain but not sure-plain: past MISSES of them re scans the rest itself
    tagged = "[2025-11-20 10:16:03 DP0] Decode batch, #running-req: 1, \n"
    odd = "Load weight begin\n"
    data = ("\n" + (tagged * 3 + odd) * (MISSES + 40)).encode()
    assert _by_scan(data) == _by_re(data) and len(_by_re(data)) == MISSES + 40
