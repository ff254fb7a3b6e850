"""Automatic metric scores and learned (ADEM) evaluators."""

from scoring.models.adem import AdemModel, ApiToken, TrainingRun
from scoring.models.metrics import MetricScore
from scoring.models.runs import MetricChunk, MetricRun

__all__ = ["AdemModel", "ApiToken", "MetricChunk", "MetricRun", "MetricScore", "TrainingRun"]
