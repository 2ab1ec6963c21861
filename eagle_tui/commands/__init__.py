"""commands layer of eagle-tui (see docs/architecture.md)."""
