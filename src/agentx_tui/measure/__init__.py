"""Measuring: what the run counts, per request and per task, in bounded memory (docs/metrics.md)."""
