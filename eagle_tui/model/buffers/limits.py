"""How many log lines the dashboard keeps: one range for the command line, the config file and
the buffer, in a module that imports nothing, so that argparse can refuse an unusable
``--max-lines`` before any command loads its model (``report``'s start is measured)."""

DEFAULT_MAX_LINES = 10_000
MIN_MAX_LINES = 100  # fewer than a tall screen's rows would leave the log pane part blank
MAX_MAX_LINES = 1_000_000

__all__ = ["DEFAULT_MAX_LINES", "MAX_MAX_LINES", "MIN_MAX_LINES"]
