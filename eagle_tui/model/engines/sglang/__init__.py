"""SGLang (``python -m sglang.launch_server``, ``sglang serve``)."""

from eagle_tui.model.engines.facets import (
    Endpoints,
    LaunchFacet,
    LogFacet,
)
from eagle_tui.model.engines.profile import EngineProfile
from eagle_tui.model.engines.sglang.metrics import FLEET, METRICS

PROFILE = EngineProfile(
    name="sglang",
    label="SGLang",
    default_port=30000,
    logs=LogFacet(logger_hints=("sglang", "sgl"), traceback_marker="sglang/srt/"),
    metrics=METRICS,
    fleet=FLEET,
    endpoints=Endpoints(server_info="/get_server_info"),
    launch=LaunchFacet(modules=("sglang.launch_server",), scripts=("sglang",),
                       flag_table="sglang"),
)

__all__ = ["PROFILE"]
