"""vLLM (``vllm serve``, ``python -m vllm.entrypoints.openai.api_server``)."""

from eagle_tui.model.engines.facets import (
    Endpoints,
    FleetFacet,
    LogFacet,
    MetricsFacet,
)
from eagle_tui.model.engines.profile import EngineProfile
from eagle_tui.model.engines.vllm.launch import LAUNCH

PROFILE = EngineProfile(
    name="vllm",
    label="vLLM",
    default_port=8000,
    logs=LogFacet(logger_hints=("vllm",), traceback_marker="vllm/"),
    metrics=MetricsFacet(prefix="vllm:"),
    fleet=FleetFacet(markers=("vllm:num_requests_running", "vllm:generation_tokens_total")),
    endpoints=Endpoints(),
    launch=LAUNCH,
)

__all__ = ["PROFILE"]
