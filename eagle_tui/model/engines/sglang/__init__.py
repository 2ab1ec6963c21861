"""SGLang (``python -m sglang.launch_server``, ``sglang serve``)."""

from eagle_tui.model.engines.facets import Endpoints
from eagle_tui.model.engines.profile import EngineProfile
from eagle_tui.model.engines.sglang.hold import HOLD
from eagle_tui.model.engines.sglang.launch import LAUNCH
from eagle_tui.model.engines.sglang.loads import PATH as LOADS_PATH
from eagle_tui.model.engines.sglang.loads import QUERY as LOADS_QUERY
from eagle_tui.model.engines.sglang.loads import parse_loads
from eagle_tui.model.engines.sglang.logrules import LOGS
from eagle_tui.model.engines.sglang.metrics import FLEET, METRICS
from eagle_tui.model.engines.sglang.server_info import parse_server_info

PROFILE = EngineProfile(
    name="sglang",
    label="SGLang",
    default_port=30000,
    logs=LOGS,
    metrics=METRICS,
    fleet=FLEET,
    endpoints=Endpoints(server_info="/server_info", server_info_aliases=("/get_server_info",),
                        read_server_info=parse_server_info,
                        # /health is /health_generate: a one-token generation once the server
                        # is up; /ready is a flag (up and not paused)
                        ready=("/ready",), health_works=True,
                        alive=("/model_info", "/get_model_info"),
                        loads=LOADS_PATH, loads_query=LOADS_QUERY, read_loads=parse_loads),
    launch=LAUNCH,
    hold=HOLD,
)

__all__ = ["PROFILE"]
