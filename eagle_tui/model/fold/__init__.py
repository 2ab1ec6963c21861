"""The one writer of the state: reduce(state, events), and merging a summary into it."""
