"""A platform that works by link and completion code, with no API: the app records decisions
itself (as the built-in crowd does) and only for participants the researcher has confirmed."""

from urllib.parse import urlparse

from annotation.crowd.base import ProviderError
from annotation.crowd.local import LocalProvider
from annotation.models import LinkParticipant, LinkPlatform


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


class LinkPlatformProvider(LocalProvider):
    name = "link"

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
