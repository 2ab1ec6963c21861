"""The pure model layer: stdlib only, no I/O, no Textual.

Log lines become typed events (``ingest``, ``events``); the fold (``fold``: ``reduce``) is the one
writer of the immutable ``DashboardState``, a record of records (``state``); views read it
(``views``: figures, liveness, alerts, steps, ETA). Beside the state, fed by the same batches:
the log and GPU buffers (``buffers``); apart from it: the fleet view (``fleet``), the launch side
(``launching``) and benchmark windows (``bench``). An import contract keeps records < views <
fold. Everything here is deterministic and fast to test; a test enforces that importing this
package loads nothing outside the standard library.
"""
