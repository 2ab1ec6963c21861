"""SGLang's paused state (``POST /pause_generation`` … ``POST /continue_generation``).

Read in SGLang 0.5.23's installed code (``srt/entrypoints/http_server.py``,
``srt/managers/tokenizer_manager.py``): while paused, ``GET /ready`` answers 503
(``is_ready()`` is "not paused and healthy") and ``GET /ping`` 200 (``is_healthy()``: started,
not unhealthy, not shutting down: "a paused server still reports 200"); a starting or unhealthy
server answers 503 to both. It logs no line of its own for a pause, and exports no pause metric.
"""

from __future__ import annotations

from eagle_tui.model.engines.facets.hold import HoldFacet

HOLD = HoldFacet(up_path="/ping")

__all__ = ["HOLD"]
