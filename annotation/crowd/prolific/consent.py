"""The way back to Prolific for a participant who declines a survey's consent page.

Prolific's completion codes carry a type; a NO_CONSENT code whose action is REQUEST_RETURN asks the
participant to return the study (which frees the place for someone else and pays nothing). The
participant reaches it at Prolific's usual completion address with the code.
"""

from annotation.crowd.prolific.study import new_completion_code
from annotation.crowd.prolific.submissions import COMPLETE_URL
from annotation.models import ProlificStudy, SurveyConsent


def consent_asked(survey):
    return bool(SurveyConsent.objects.filter(survey=survey).exclude(consent_text="").exists())


def no_consent_code(study):
    """The study's NO_CONSENT code, made (once) for a study created before there was one."""
    if not study.no_consent_code:
        ProlificStudy.objects.filter(pk=study.pk, no_consent_code="").update(no_consent_code=new_completion_code())
        study.refresh_from_db(fields=["no_consent_code"])
    return study.no_consent_code


def no_consent_codes(survey, study):
    """The study body's extra completion code when the survey asks for consent (else none)."""
    if not consent_asked(survey):
        return []
    return [
        {"code": no_consent_code(study), "code_type": "NO_CONSENT", "actions": [{"action": "REQUEST_RETURN"}]},
    ]


def no_consent_url(study):
    return COMPLETE_URL.format(code=no_consent_code(study))
