"""Pure functions that read the state: figures, liveness, alerts, steps, ETA, summaries."""
