"""Alert hints in the engine's own spelling (issue 12: vLLM's hint named SGLang's flag)."""

from __future__ import annotations

from eagle_tui.model.events import DraftConfig, EngineDetected, HiddenStateDims, SpecConfig
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState


def misconfigured(engine: str, algorithm: str) -> DashboardState:
    return reduce(DashboardState(), [
        EngineDetected(engine),  # type: ignore[arg-type]
        SpecConfig(algorithm=algorithm, draft_model="org/eagle3-draft"),
        DraftConfig("d/config.json", ("LlamaForCausalLMEagle3",), True, 4096, 4096),
        HiddenStateDims(4096, 10),
    ])


def test_vllm_hint_names_speculative_config_method() -> None:
    s = misconfigured("vllm", "eagle")
    msgs = {a.kind: a.message for a in s.alerts}
    assert '"method": "eagle3"' in msgs["eagle3_draft_with_eagle"]
    assert "--speculative-config" in msgs["eagle3_draft_with_eagle"]
    assert "--speculative-algorithm" not in msgs["eagle3_draft_with_eagle"]
    assert "--speculative-algorithm" not in msgs["hidden_dims"]


def test_sglang_hint_keeps_speculative_algorithm() -> None:
    s = misconfigured("sglang", "EAGLE")
    msgs = {a.kind: a.message for a in s.alerts}
    assert "Relaunch with --speculative-algorithm EAGLE3." in msgs["eagle3_draft_with_eagle"]
