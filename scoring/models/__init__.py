"""Automatic metric scores and learned (ADEM) evaluators."""

from scoring.models.adem import AdemModel, ApiToken, TrainingRun
from scoring.models.judges import Judge, JudgeCacheEntry, JudgeUsage
from scoring.models.metrics import ConversationMetricScore, MetricScore, TurnMetricScore
from scoring.models.runs import MetricChunk, MetricRun

__all__ = [
    "AdemModel",
    "ApiToken",
    "ConversationMetricScore",
    "Judge",
    "JudgeCacheEntry",
    "JudgeUsage",
    "MetricChunk",
    "MetricRun",
    "MetricScore",
    "TrainingRun",
    "TurnMetricScore",
]
