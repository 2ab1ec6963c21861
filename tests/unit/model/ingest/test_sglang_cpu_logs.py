"""Real SGLang 0.5.23 logs (tests/fixtures/sglang-cpu, recorded from the CPU server of
tests/realserver_sglang): the ``server_args={...}`` dict form, and the seed's bug — an EAGLE-3
draft launched with ``--speculative-algorithm EAGLE`` — caught from the log alone.

``misconf.log`` is that misconfiguration, recorded from the real server (three greedy
``/generate`` calls of 64 tokens; ``accept len: 1.00`` on every decode line); ``eagle3``,
``ngram`` and ``nospec`` are the correctly configured servers.
"""

from __future__ import annotations

import io
import json
import time
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from eagle_tui.cli import main
from eagle_tui.model.bench.windows import is_own_access
from eagle_tui.model.engines.sglang.logs import server_args_spec, weighted_accept_len
from eagle_tui.model.events import (
    DecodeStats,
    DraftConfig,
    EngineDetected,
    Phase,
    SpecConfig,
)
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState
from tests.support.parsing import parse
from tests.support.paths import TESTS

FIX = TESTS / "fixtures" / "sglang-cpu"
DRAFT = "/root/.cache/eagle-tui-test/sglang-cpu/models/tiny-eagle3-sglang"


def lines(name: str) -> list[bytes]:
    return (FIX / name).read_bytes().splitlines()


def report_text(path: Path) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["report", "--workers", "1", str(path)]) == 0
    return out.getvalue()


def report_json(path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> dict[str, Any]:
    assert main(["report", "--json", "--workers", "1", str(path)]) == 0
    result: dict[str, Any] = json.loads(capsysbinary.readouterr().out)
    return result


def server_info_avg(name: str) -> float:
    info = json.loads((FIX / f"{name}-get_server_info.json").read_text())
    return float(info["internal_states"][0]["avg_spec_accept_length"])


def server_args_line(name: str) -> str:
    return next(ln.decode() for ln in lines(name) if b"server_args={" in ln)


# -------------------------------------------------------------------- the server_args dict form


def test_the_dict_form_gives_every_speculative_setting() -> None:
    assert server_args_spec(server_args_line("eagle3.log")) == {
        "algorithm": "EAGLE3", "draft_model": "/opt/sglang-cpu/models/tiny-eagle3-sglang",
        "num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 4,
    }
    assert server_args_spec(server_args_line("misconf.log"))["algorithm"] == "EAGLE"
    ngram = server_args_spec(server_args_line("ngram.log"))
    assert ngram["algorithm"] == "NGRAM"


def test_the_dict_form_without_speculation_gives_no_setting() -> None:
    found = server_args_spec(server_args_line("nospec.log"))
    assert found.get("algorithm") is None and found.get("draft_model") is None


def test_the_dict_form_reads_double_quotes_and_none() -> None:
    line = ("server_args={'model_path': 'm', 'speculative_algorithm': \"EAGLE3\", "
            "'speculative_draft_model_path': None, 'speculative_num_steps': None, "
            "'speculative_eagle_topk': 8}")
    assert server_args_spec(line) == {"algorithm": "EAGLE3", "draft_model": None, "eagle_topk": 8}


def test_a_huge_unterminated_value_is_bounded_work() -> None:
    line = "server_args={'speculative_algorithm': '" + "x" * 2_000_000
    t0 = time.perf_counter()
    assert "algorithm" not in server_args_spec(line)
    assert time.perf_counter() - t0 < 1.0


def test_the_dict_line_alone_names_the_engine_and_the_settings() -> None:
    events = parse([server_args_line("eagle3.log").encode()])
    assert [e.engine for e in events if isinstance(e, EngineDetected)] == ["sglang"]
    spec = [e for e in events if isinstance(e, SpecConfig)]
    assert spec and spec[-1].algorithm == "EAGLE3" and spec[-1].num_draft_tokens == 4


def test_a_closed_dict_does_not_swallow_the_next_unprefixed_line() -> None:
    """The dict ends with ``}``: an unprefixed warning after it is not a wrapped continuation."""
    s = reduce(DashboardState(), parse([
        "[2026-12-01 13:13:04] server_args={'speculative_algorithm': 'EAGLE3', "
        "'speculative_draft_model_path': '/d'}",
        "  warnings.warn(speculative_algorithm='NGRAM')",
    ]))
    assert s.config.spec is not None and s.config.spec.algorithm == "EAGLE3"


# ------------------------------------------------------------------------------- report, text


def test_report_on_the_real_eagle3_log_shows_the_speculative_settings() -> None:
    text = report_text(FIX / "eagle3.log")
    assert ("speculative: algorithm=EAGLE3, draft_model=/opt/sglang-cpu/models/"
            "tiny-eagle3-sglang, num_steps=3, eagle_topk=1, num_draft_tokens=4") in text
    assert "alerts: none" in text


def test_report_on_the_real_nospec_log_sees_no_speculation() -> None:
    assert "speculative: not seen in the log" in report_text(FIX / "nospec.log")


def test_report_on_the_real_misconfigured_log_raises_the_critical_alert() -> None:
    text = report_text(FIX / "misconf.log")
    assert f"speculative: algorithm=EAGLE, draft_model={DRAFT}" in text
    assert "alert [critical] eagle3_draft_with_eagle:" in text
    assert "alert [critical] drafts_rejected:" in text
    assert "alerts: none" not in text


def test_report_json_on_the_real_misconfigured_log(
        capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    r = report_json(FIX / "misconf.log", capsysbinary)
    assert r["engine"] == "sglang"
    assert r["speculative"]["algorithm"] == "EAGLE"
    kinds = {a["kind"]: a["severity"] for a in r["alerts"]}
    assert kinds["eagle3_draft_with_eagle"] == "critical"
    assert kinds["drafts_rejected"] == "critical"
    assert {"role": "draft", "architecture": "LlamaForCausalLMEagle3"} in r["models"]


def test_the_alert_is_raised_by_the_first_decode_line(tmp_path: Path) -> None:
    """Within one decode-log interval: the log up to its first ``Decode batch`` line."""
    all_lines = lines("misconf.log")
    first = next(i for i, ln in enumerate(all_lines) if b"Decode batch" in ln)
    cut = tmp_path / "misconf-first-decode.log"
    cut.write_bytes(b"\n".join(all_lines[: first + 1]) + b"\n")
    assert "alert [critical] eagle3_draft_with_eagle:" in report_text(cut)


def test_decode_lines_alone_raise_the_collapse_alert(tmp_path: Path) -> None:
    """A fragment of three decode lines: no server_args, no draft load line, nothing else."""
    frag = tmp_path / "misconf-decode-only.log"
    frag.write_bytes(b"\n".join([ln for ln in lines("misconf.log")
                                 if b"Decode batch" in ln][:3]) + b"\n")
    text = report_text(frag)
    assert "speculative: on (accept len on the stats lines" in text
    assert "alert [critical] drafts_rejected:" in text


def test_the_draft_load_line_alone_is_evidence_of_an_eagle3_draft() -> None:
    """Without server_args' draft settings, ``type=LlamaForCausalLMEagle3`` names the draft."""
    kept = [ln for ln in lines("misconf.log") if b"server_args=" not in ln]
    s = reduce(DashboardState(), parse([
        b"[2026-12-01 14:33:22] server_args={'speculative_algorithm': 'EAGLE'}", *kept]))
    kinds = {a.kind for a in s.alerts}
    assert "eagle3_draft_with_eagle" in kinds
    assert any(m.role == "draft" and m.architecture == "LlamaForCausalLMEagle3"
               for m in s.config.models)


# -------------------------------------------------------------------- weighted acceptance length


@pytest.mark.parametrize(("name", "tolerance"), [("eagle3", 0.01), ("ngram", 0.05),
                                                 ("misconf", 0.001)])
def test_weighted_accept_len_agrees_with_the_server(name: str, tolerance: float) -> None:
    """Each line weighed by its batch size gives the server's own cumulative average."""
    stats = [e for e in parse(lines(f"{name}.log")) if isinstance(e, DecodeStats)]
    got = weighted_accept_len(stats)
    want = server_info_avg(name)
    assert got is not None and abs(got - want) <= tolerance * want, (got, want)


def test_weighted_accept_len_weighs_by_the_batch() -> None:
    stats = [DecodeStats(lineno=1, accept_len=4.0, running=3),
             DecodeStats(lineno=2, accept_len=1.0, running=1),
             DecodeStats(lineno=3, gen_tps=10.0, running=5)]
    assert weighted_accept_len(stats) == pytest.approx((3 * 4.0 + 1.0) / 4)
    assert weighted_accept_len([DecodeStats(lineno=1, accept_len=2.0)]) == 2.0
    assert weighted_accept_len([]) is None


@pytest.mark.parametrize("known", [
    [],
    [SpecConfig(algorithm="EAGLE3", draft_model="/d", source="server_info"),
     DraftConfig(path="/d", architectures=("LlamaForCausalLMEagle3",), is_eagle3=True)],
    [SpecConfig(algorithm="NGRAM", source="log")],
    [SpecConfig(algorithm="EAGLE", draft_model="/d", source="log"),
     DraftConfig(path="/d", architectures=("LlamaForCausalLMEagle",), is_eagle3=False)],
], ids=["nothing", "eagle3-correct", "ngram", "eagle-with-eagle-draft"])
def test_the_collapse_alert_from_decode_lines_whatever_else_is_known(known: list[Any]) -> None:
    """Settings that look right (from /server_info, the draft's config) do not hide it."""
    decode = [ln for ln in lines("misconf.log") if b"Decode batch" in ln][:3]
    s = reduce(reduce(DashboardState(), known), parse(decode))
    assert any(a.kind == "drafts_rejected" and a.severity == "critical" for a in s.alerts)


def test_a_health_generation_is_neither_serving_nor_throughput() -> None:
    """What a poll of SGLang's working ``/health`` leaves in the real log (its one-token prefill
    line, then the access line): the server stays "ready", the log's series do not move, and
    the access line is eagle-tui's own (folded)."""
    real = lines("eagle3.log")
    ready = next(i for i, ln in enumerate(real) if b"fired up and ready" in ln)
    polls: list[bytes] = []
    for s in range(30):
        polls += [f"[2026-12-01 13:14:{s:02d}] Prefill batch, #new-seq: 1, #new-token: 1, "
                  "#cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0, "
                  "#pending-token: 0, cpu graph: False, input throughput (token/s): 1.00".encode(),
                  f'[2026-12-01 13:14:{s:02d}] INFO:     127.0.0.1:45284 - "GET '
                  f'/health?eagle-tui HTTP/1.1" 200 OK'.encode()]
    before = reduce(DashboardState(), parse(real[:ready + 1]))
    after = reduce(DashboardState(), parse(real[:ready + 1] + polls))
    assert before.startup.phase is Phase.READY and after.startup.phase is Phase.READY
    assert len(after.stats.gen_tps) == len(before.stats.gen_tps) == 0
    assert len(after.stats.accept_len) == 0
    assert all(is_own_access(p.decode()) for p in polls[1::2])
