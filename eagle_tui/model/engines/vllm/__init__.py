"""vLLM (``vllm serve``, ``python -m vllm.entrypoints.openai.api_server``)."""

from eagle_tui.model.engines.facets import (
    Endpoints,
    FleetFacet,
    LaunchFacet,
    MetricsFacet,
)
from eagle_tui.model.engines.profile import EngineProfile
from eagle_tui.model.engines.vllm.logrules import LOGS

PROFILE = EngineProfile(
    name="vllm",
    label="vLLM",
    default_port=8000,
    logs=LOGS,
    metrics=MetricsFacet(prefix="vllm:"),
    fleet=FleetFacet(markers=("vllm:num_requests_running", "vllm:generation_tokens_total")),
    endpoints=Endpoints(),
    launch=LaunchFacet(modules=("vllm.entrypoints.openai.api_server",), scripts=("vllm",),
                       flag_table="vllm"),
)

__all__ = ["PROFILE"]
