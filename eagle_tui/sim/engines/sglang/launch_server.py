"""``python -m sglang.launch_server ...`` in the demo: the simulator, driven by these flags."""

from eagle_tui.sim.engine_cli import main

if __name__ == "__main__":
    raise SystemExit(main("sglang"))
