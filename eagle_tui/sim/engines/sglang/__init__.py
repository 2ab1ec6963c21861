"""A stand-in ``sglang`` package for the demo: ``python -m sglang.launch_server`` runs the
simulator (``eagle_tui.sim.engine_cli``). Only importable when ``eagle_tui/sim/engines`` is put
on ``PYTHONPATH`` (the demo does it for the servers it launches); never installed as ``sglang``.
"""
