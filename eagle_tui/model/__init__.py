"""The pure model layer: stdlib only, no I/O, no Textual.

Parsers turn log lines into typed events, ``reduce`` folds events into the immutable
``DashboardState``, alert rules read that state. Everything here is deterministic and fast to
test; a test enforces that importing this package loads nothing outside the standard library.
"""
