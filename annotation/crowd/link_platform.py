"""A platform that works by link and completion code, with no API: the app records decisions
itself (as the built-in crowd does) and only for participants the researcher has confirmed."""

import re
from urllib.parse import urlparse

from annotation.crowd.base import ProviderError
from annotation.crowd.local import LocalProvider
from annotation.models import LinkParticipant, LinkPlatform

PARAM_RE = re.compile(r"^[A-Za-z0-9_-]{1,50}$")


def completion_url_problem(template):
    """Why `template` cannot be a completion URL, or "" when it can."""
    parsed = urlparse(template.replace("{code}", "CODE"))
    if parsed.scheme != "https" or not parsed.netloc:
        return f"The completion URL {template!r} must be an https:// address."
    if template.count("{code}") != 1:
        return f"The completion URL {template!r} must contain {{code}} once, where the completion code goes."
    return ""


def platform_settings(survey, *, participant_param="participant_id", completion_url=""):
    problem = completion_url_problem(completion_url) if completion_url else ""
    if problem:
        raise ProviderError(problem)
    row, _ = LinkPlatform.objects.get_or_create(
        survey=survey, defaults={"participant_param": participant_param, "completion_url": completion_url}
    )
    return row


def confirm_participants(*, survey, participant_ids):
    """Mark the ids the platform lists as completed; returns (confirmed now, ids not seen here)."""
    wanted = {pid.strip() for pid in participant_ids if pid.strip()}
    known = set(
        LinkParticipant.objects.filter(survey=survey, participant_id__in=wanted).values_list(
            "participant_id", flat=True
        )
    )
    changed = LinkParticipant.objects.filter(survey=survey, participant_id__in=known, confirmed=False).update(
        confirmed=True
    )
    return changed, sorted(wanted - known)


def unconfirm_participants(*, survey, participant_ids):
    """Undo a confirmation (an id confirmed by mistake): their work stops counting. Returns the count."""
    wanted = {pid.strip() for pid in participant_ids if pid.strip()}
    return LinkParticipant.objects.filter(survey=survey, participant_id__in=wanted, confirmed=True).update(
        confirmed=False
    )


def platform_update(*, survey, participant_param, completion_url):
    """Change the parameter name and completion URL, only while no participant has started:
    afterwards the links already handed out and the codes already given must keep working."""
    if LinkParticipant.objects.filter(survey=survey).exists():
        raise ProviderError("Participants have started already: the link and completion URL can no longer change.")
    participant_param = participant_param.strip()
    if not PARAM_RE.match(participant_param):
        raise ProviderError(
            f"The parameter name {participant_param!r} must be 1-50 letters, digits, _ or - (e.g. workerId)."
        )
    problem = completion_url_problem(completion_url.strip())
    if problem:
        raise ProviderError(problem)
    LinkPlatform.objects.update_or_create(
        survey=survey, defaults={"participant_param": participant_param, "completion_url": completion_url.strip()}
    )


class LinkPlatformProvider(LocalProvider):
    name = "link"

    def extension_cost(self, *, survey, per_hit, n_hits):
        # RateLab neither pays nor sees the platform's price: the survey's reward is the researcher's own figure.
        added = per_hit * n_hits
        rewards = f"${added * survey.reward_cents / 100:,.2f}"
        return {
            "total": f"{rewards} on the platform, plus its fees",
            "lines": [
                f"Paid on the platform, outside RateLab: at the survey's reward of ${survey.reward_cents / 100:.2f} "
                f"per task, {added:,} more tasks come to {rewards} before the platform's own fees. Raise the "
                "number of places (or tasks) there too, or nobody is sent to the new work."
            ],
        }

    def _require_confirmed(self, assignment):
        if not LinkParticipant.objects.filter(
            survey_id=assignment.hit.survey_id, annotator_id=assignment.annotator_id, confirmed=True
        ).exists():
            raise ProviderError("This participant is not confirmed yet: confirm the platform's completed ids first.")

    def approve(self, *, assignment, feedback=""):
        self._require_confirmed(assignment)
        return super().approve(assignment=assignment, feedback=feedback)

    def reject(self, *, assignment, reason):
        self._require_confirmed(assignment)
        return super().reject(assignment=assignment, reason=reason)

    def bonus(self, *, assignment, amount_cents, reason):
        self._require_confirmed(assignment)
        return super().bonus(assignment=assignment, amount_cents=amount_cents, reason=reason)
