"""The phases vLLM's traceback frames imply (its :attr:`LogFacet.phase_frames`).

Names as vLLM 0.32 defines them: the engine core's busy loop (``v1/engine/core.py``) runs only
after the engine is built (its KV cache sized and its graphs captured), and the model's layers
are made inside the loader (``model_loader/utils.py``'s ``initialize_model``,
``models/utils.py``'s ``make_layers``), which the worker's ``load_model`` calls.
"""

from __future__ import annotations

from eagle_tui.model.engines.facets.logs import frame_rules
from eagle_tui.model.events import Phase

PHASE_FRAMES = frame_rules(
    (Phase.SERVING,
     ("run_busy_loop", "_process_engine_step", "step_with_batch_queue"),
     "the engine core's busy loop in the traceback"),
    (Phase.LOADING_WEIGHTS,
     ("load_model", "initialize_model", "make_layers"),
     "the model being built and loaded in the traceback"),
)

__all__ = ["PHASE_FRAMES"]
