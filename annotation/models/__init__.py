"""Study data (datasets, contexts, responses) and rating studies (surveys, HITs, ratings)."""

from annotation.models.bws import BWSJudgement
from annotation.models.chat_systems import ChatSystem
from annotation.models.conversations import (
    Conversation,
    ConversationAspect,
    ConversationJudgement,
    ConversationRating,
    ConversationTurn,
)
from annotation.models.datasets import REFERENCE_SYSTEM_NAME, Context, Dataset, Reference, Response, System
from annotation.models.identity import LinkIdentity
from annotation.models.link_platform import LinkParticipant, LinkPlatform
from annotation.models.mturk import (
    MTurkAssignment,
    MTurkBlock,
    MTurkBonus,
    MTurkDraft,
    MTurkExclusionQualification,
    MTurkHIT,
    MTurkSettings,
)
from annotation.models.pairwise import PairwiseJudgement
from annotation.models.prolific import (
    ProlificBlockList,
    ProlificBonus,
    ProlificStudy,
    ProlificSubmission,
    ProlificWebhookEvent,
)
from annotation.models.quality import ExclusionDecision, QualityReport
from annotation.models.ratings import (
    HIT,
    Annotator,
    Assignment,
    AttentionAnswer,
    AttentionCheck,
    HITItem,
    HITPage,
    Rating,
    WrittenResponse,
)
from annotation.models.reviews import ReviewAction
from annotation.models.surveys import Aspect, Survey

__all__ = [
    "HIT",
    "REFERENCE_SYSTEM_NAME",
    "Annotator",
    "Aspect",
    "Assignment",
    "AttentionAnswer",
    "AttentionCheck",
    "BWSJudgement",
    "ChatSystem",
    "Context",
    "Conversation",
    "ConversationAspect",
    "ConversationJudgement",
    "ConversationRating",
    "ConversationTurn",
    "Dataset",
    "ExclusionDecision",
    "HITItem",
    "HITPage",
    "LinkIdentity",
    "LinkParticipant",
    "LinkPlatform",
    "MTurkAssignment",
    "MTurkBlock",
    "MTurkBonus",
    "MTurkDraft",
    "MTurkExclusionQualification",
    "MTurkHIT",
    "MTurkSettings",
    "PairwiseJudgement",
    "ProlificBlockList",
    "ProlificBonus",
    "ProlificStudy",
    "ProlificSubmission",
    "ProlificWebhookEvent",
    "QualityReport",
    "Rating",
    "Reference",
    "Response",
    "ReviewAction",
    "Survey",
    "System",
    "WrittenResponse",
]
