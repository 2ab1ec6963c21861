"""``python -m eagle_tui`` is the same as the ``eagle-tui`` console script."""

try:
    import eagle_tui.interrupts  # noqa: F401  (a Ctrl-C lost while the rest imports: again)
    from eagle_tui.cli import entry
except KeyboardInterrupt:  # Ctrl-C while the entry point is still being imported: as main() does
    exec("")  # (cli.forget_interrupt, which may not be imported yet)
    raise SystemExit(130) from None

entry()
