"""The run history (SQLite): what was launched or watched, how it went, and how to stop it."""
