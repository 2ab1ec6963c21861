"""Log lines in, typed events out: framing, sanitizing, classifying, parsing, crashes."""
