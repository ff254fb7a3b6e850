"""Study data (datasets, contexts, responses) and rating studies (surveys, HITs, ratings)."""

from annotation.models.bws import BWSJudgement
from annotation.models.chat_systems import ChatSystem
from annotation.models.consent import ConsentResponse, ParticipantDeletion, QuestionnaireResponse, SurveyConsent
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
from annotation.models.live_chat import ChatAttempt, ChatHIT, ChatSurveySettings, LiveChat
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
    "ChatAttempt",
    "ChatHIT",
    "ChatSurveySettings",
    "ChatSystem",
    "ConsentResponse",
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
    "LiveChat",
    "MTurkAssignment",
    "MTurkBlock",
    "MTurkBonus",
    "MTurkDraft",
    "MTurkExclusionQualification",
    "MTurkHIT",
    "MTurkSettings",
    "PairwiseJudgement",
    "ParticipantDeletion",
    "ProlificBlockList",
    "ProlificBonus",
    "ProlificStudy",
    "ProlificSubmission",
    "ProlificWebhookEvent",
    "QualityReport",
    "QuestionnaireResponse",
    "Rating",
    "Reference",
    "Response",
    "ReviewAction",
    "Survey",
    "SurveyConsent",
    "System",
    "WrittenResponse",
]
