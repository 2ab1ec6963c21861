"""The phases SGLang's traceback frames imply (its :attr:`LogFacet.phase_frames`).

Names as SGLang 0.5.23 defines them (``srt/managers/scheduler.py``, ``scheduler_pp_mixin.py``).
The scheduler enters its event loop only once the model, the KV pool and the CUDA graphs are
built, so a traceback through the loop or a batch it runs is one of a server taking requests
(``speculative/*_worker_v2.py`` for the draft worker's decode step).
"""

from __future__ import annotations

from eagle_tui.model.engines.facets.logs import frame_rules
from eagle_tui.model.events import Phase

PHASE_FRAMES = frame_rules(
    (Phase.SERVING,
     ("event_loop_normal", "event_loop_overlap", "event_loop_pp", "event_loop_pp_disagg_prefill",
      "event_loop_pp_disagg_decode", "run_event_loop", "dispatch_event_loop",
      "get_next_batch_to_run", "run_batch", "process_batch_result",
      # the model and speculative workers' step: only the scheduler's run_batch calls it
      "forward_batch_generation", "_draft_extend_for_decode"),
     "the scheduler's event loop in the traceback"),
)

__all__ = ["PHASE_FRAMES"]
