"""Metric runs: computing them in chunks, storing scores, progress, and the signatures of what was computed.
The pure engine is scoring.metrics."""
