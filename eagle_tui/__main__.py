"""``python -m eagle_tui`` is the same as the ``eagle-tui`` console script."""

try:
    from eagle_tui.cli import entry
except KeyboardInterrupt:  # Ctrl-C while the entry point is still being imported: as main() does
    exec("")  # (cli.forget_interrupt, which may not be imported yet)
    raise SystemExit(130) from None

entry()
