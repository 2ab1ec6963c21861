"""Benchmark windows on the log's timeline, their figures, and run comparisons."""
