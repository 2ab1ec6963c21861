"""Putting a dashboard together: a spec in, sources, session, thread and app (or lines) out.

``spec`` (what to watch, frozen) → ``remote`` (the transports that reach it) → ``build`` (the
sources and the session) → ``threaded`` (the session on its own thread) → ``open`` (the
dashboard or the headless presenter). Commands only translate their arguments into a spec.
"""
