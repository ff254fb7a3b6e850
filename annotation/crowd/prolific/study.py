"""A survey's Prolific study as RateLab keeps it: its row and codes, what the server needs to publish it,
the entry URL participants arrive by, its places and the pay check (Prolific's hourly floor)."""

import math
import os
import secrets

from django.conf import settings
from django.urls import reverse

from annotation.crowd.base import ProviderError
from annotation.crowd.prolific.pay import floor_problem, top_up_cents
from annotation.models import Assignment, ProlificStudy

DEFAULT_MINUTES = 10


def new_completion_code():
    return secrets.token_hex(4).upper()


def new_draft_tag():
    return secrets.token_hex(5)


def draft_prefix(survey, study):
    """The start of the draft's internal name, unique to this survey's row (never cut by the 200 limit)."""
    return f"RateLab survey {survey.pk} ({study.draft_tag}):"


def study_settings(survey, *, reward_cents=None, minutes=None, currency=None):
    """The survey's Prolific row, created on first use with fresh completion codes, in the
    currency this server's Prolific workspace pays in (PROLIFIC_CURRENCY) unless told another."""
    row, _ = ProlificStudy.objects.get_or_create(
        survey=survey,
        defaults={
            "reward_cents": reward_cents if reward_cents is not None else survey.reward_cents,
            "estimated_minutes": minutes or DEFAULT_MINUTES,
            "currency": currency or settings.PROLIFIC_CURRENCY,
            "completed_code": new_completion_code(),
            "failed_check_code": new_completion_code(),
            "no_consent_code": new_completion_code(),
            "draft_tag": new_draft_tag(),
        },
    )
    return row


def setup_problems():
    """What this server lacks to publish on Prolific, in words a researcher can pass on (never the token)."""
    problems = []
    if not os.environ.get("PROLIFIC_API_TOKEN"):
        problems.append("PROLIFIC_API_TOKEN is not set")
    base = settings.PUBLIC_BASE_URL
    if not base.startswith("https://"):
        problems.append(f"PUBLIC_BASE_URL is {repr(base) + ', not an https address' if base else 'not set'}")
    return problems


def entry_url(survey, base=None):
    """The study URL Prolific sends participants to, with Prolific's three placeholders."""
    base = (base or settings.PUBLIC_BASE_URL).rstrip("/")
    if not base.startswith("https://"):
        raise ProviderError("PUBLIC_BASE_URL must be the app's public https address to publish on Prolific.")
    path = reverse("annotation:prolific_entry", args=[survey.token])
    placeholders = "&".join(f"{name}={{{{%{name}%}}}}" for name in ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID"))
    return f"{base}{path}?{placeholders}"


def slot_count(survey):
    """Task slots, one per Prolific place: a rejected slot whose place Prolific re-offered is
    counted once, through the open slot that replaced it."""
    return Assignment.objects.filter(hit__survey=survey, replaced=False).count()


def pay_check(study):
    """Prolific's hourly floor at the estimated median and, once measured, at the measured median."""
    problem = floor_problem(study.reward_cents, study.estimated_minutes, study.currency)
    if study.measured_median_seconds:
        minutes = max(1, math.ceil(study.measured_median_seconds / 60))
        measured = floor_problem(study.reward_cents, minutes, study.currency, measured=True)
        return {
            "estimated": problem,
            "measured": measured,
            "measured_minutes": minutes,
            "top_up_cents": top_up_cents(study.reward_cents, minutes, study.currency),
        }
    return {"estimated": problem, "measured": "", "measured_minutes": None, "top_up_cents": 0}
