"""SGLang (``python -m sglang.launch_server``, ``sglang serve``)."""

from eagle_tui.model.engines.facets import (
    Endpoints,
    FleetFacet,
    LogFacet,
    MetricsFacet,
)
from eagle_tui.model.engines.profile import EngineProfile
from eagle_tui.model.engines.sglang.launch import LAUNCH

PROFILE = EngineProfile(
    name="sglang",
    label="SGLang",
    default_port=30000,
    logs=LogFacet(logger_hints=("sglang", "sgl"), traceback_marker="sglang/srt/"),
    metrics=MetricsFacet(prefix="sglang:"),
    fleet=FleetFacet(markers=("sglang:num_running_reqs", "sglang:num_requests_running",
                              "sglang:generation_tokens_total")),
    endpoints=Endpoints(server_info="/get_server_info"),
    launch=LAUNCH,
)

__all__ = ["PROFILE"]
