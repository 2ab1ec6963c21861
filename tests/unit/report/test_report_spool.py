"""``NumberSpool``: pre-summarized values (what parallel workers send) give the same spool as
tokens added one batch at a time, and the text rolls over from memory to a file intact."""

from __future__ import annotations

import io
import random
import statistics
from array import array
from collections import Counter

import pytest

from eagle_tui.report.spool import NumberSpool
from tests.support.probe import run_probe


def tokens(n: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    return [f"{rng.uniform(1, 900):.2f}".encode() for _ in range(n)]


def text(spool: NumberSpool) -> bytes:
    out = io.BytesIO()
    spool.write_json(out)
    return out.getvalue()


@pytest.mark.parametrize("median", [False, True])
def test_summarized_batches_equal_token_batches(median: bool) -> None:
    batches = [tokens(n, i) for i, n in enumerate([0, 1, 700, 5000, 200_000])]
    direct, merged = NumberSpool(median), NumberSpool(median)
    try:
        for batch in batches:
            direct.add_tokens(batch, b",".join(batch))
            floats = list(map(float, batch))
            merged.add_text(b",".join(batch), len(batch), floats[-600:])
            if median:
                merged.add_block(array("d", sorted(floats)).tobytes())
            else:
                merged.add_counts(dict(Counter(batch)))
        assert text(direct) == text(merged)  # > 1 MiB: both rolled over to a file
        assert len(text(direct)) > 1 << 20
        assert direct.count == merged.count and list(direct.tail) == list(merged.tail)
        assert direct.mean() == merged.mean()
        assert direct.median() == merged.median()
        values = [float(t) for b in batches for t in b]
        if median:
            assert merged.median() == statistics.median(values)
        else:
            assert merged.mean() == pytest.approx(statistics.fmean(values), rel=1e-15)
    finally:
        direct.close()
        merged.close()


def test_a_small_report_does_not_import_tempfile() -> None:
    probe = ("import io, sys\n"
             "from eagle_tui.report import build_report, close, write_json as dump\n"
             "r = build_report(io.BytesIO(b'[2025-11-20 10:15:02] Decode batch, accept len: "
             "2.5, gen throughput (token/s): 10.0\\n'), 'x')\n"
             "dump(r, io.BytesIO()); close(r)\nprint('tempfile' in sys.modules)")
    assert run_probe(probe).strip() == "False"
