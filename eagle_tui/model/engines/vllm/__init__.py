"""vLLM (``vllm serve``, ``python -m vllm.entrypoints.openai.api_server``)."""

from eagle_tui.model.engines.facets import Endpoints
from eagle_tui.model.engines.profile import EngineProfile
from eagle_tui.model.engines.vllm.hold import HOLD
from eagle_tui.model.engines.vllm.launch import LAUNCH
from eagle_tui.model.engines.vllm.logrules import LOGS
from eagle_tui.model.engines.vllm.metrics import FLEET, METRICS

PROFILE = EngineProfile(
    name="vllm",
    label="vLLM",
    default_port=8000,
    logs=LOGS,
    metrics=METRICS,
    fleet=FLEET,
    endpoints=Endpoints(),  # its /health asks the engine client only: no work
    launch=LAUNCH,
    hold=HOLD,
)

__all__ = ["PROFILE"]
