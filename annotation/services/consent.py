"""Consent and questionnaires: setting them up, the annotator's steps before and after the tasks,
the pseudonymised export, the staff summary and a participant's deletion on request.

The steps (`next_step`) run before any work is claimed: an entry page's Start (a POST) sends an
annotator who has not accepted the current consent text, or not answered the pre-task
questionnaire, to those pages instead of claiming; their POST claims once the last step is done.
"""

import io
import json
import secrets
import statistics

from django.db import transaction

from annotation.models import (
    Annotator,
    ConsentResponse,
    LinkIdentity,
    LinkParticipant,
    MTurkAssignment,
    ParticipantDeletion,
    ProlificSubmission,
    QuestionnaireResponse,
    Survey,
    SurveyConsent,
)
from annotation.selectors.annotator import handed_in_work
from annotation.selectors.pseudonyms import pseudonym_map
from annotation.services.text.csv_safety import writer as csv_writer

PRE, POST = QuestionnaireResponse.Phase.PRE, QuestionnaireResponse.Phase.POST
# Prolific statuses after which a participant's id is no longer needed to review or pay them.
# Numbers' median and range are shown from this many answers on: below it they would be one
# person's (or two people's) own answers on a page staff read.
MIN_FOR_SPREAD = 3
PROLIFIC_SETTLED = {"APPROVED", "REJECTED", "RETURNED", "TIMED-OUT"}


class DeletionRefused(Exception):
    pass


def setup_for(survey):
    """The survey's SurveyConsent, or None when it asks for neither consent nor questionnaires."""
    setup = SurveyConsent.objects.filter(survey=survey).first()
    if setup is None or not (setup.consent_text.strip() or setup.pre_questions or setup.post_questions):
        return None
    return setup


@transaction.atomic
def consent_setup_save(*, survey, consent_text, consent_version, pre_questions, post_questions):
    """Store (or replace) the survey's consent text and questions; clears the row when all are empty."""
    text = (consent_text or "").strip()
    asks = bool(text or pre_questions)
    Survey.objects.filter(pk=survey.pk).update(asks_before_tasks=asks)
    survey.asks_before_tasks = asks
    if not (text or pre_questions or post_questions):
        SurveyConsent.objects.filter(survey=survey).delete()
        return None
    setup, _ = SurveyConsent.objects.update_or_create(
        survey=survey,
        defaults={
            "consent_text": text,
            "consent_version": (consent_version or "1").strip()[:40] if text else "",
            "pre_questions": pre_questions,
            "post_questions": post_questions,
        },
    )
    return setup


def consent_state(survey, annotator, setup=None):
    """ "accepted", "declined" or "" (not answered) for the current version of the consent text."""
    setup = setup or setup_for(survey)
    if setup is None or not setup.consent_text:
        return "accepted"
    latest = (
        ConsentResponse.objects.filter(survey=survey, annotator=annotator, version=setup.consent_version)
        .order_by("-pk")
        .first()
    )
    if latest is None:
        return ""
    return "accepted" if latest.accepted else "declined"


def answered(survey, annotator, phase):
    return QuestionnaireResponse.objects.filter(survey=survey, annotator=annotator, phase=phase).exists()


def next_step(survey, annotator):
    """ "consent", "pre" or None: what this annotator must do before any task of `survey` is claimed."""
    if not survey.asks_before_tasks:
        return None
    setup = setup_for(survey)
    if setup is None:
        return None
    if consent_state(survey, annotator, setup) != "accepted":
        return "consent"
    if setup.pre_questions and not answered(survey, annotator, PRE):
        return "pre"
    return None


def post_pending(survey, annotator):
    """Whether the annotator, having handed in work, still has the post-task questionnaire to answer."""
    setup = setup_for(survey)
    return bool(
        setup
        and setup.post_questions
        and not answered(survey, annotator, POST)
        and handed_in_work(survey=survey, annotator=annotator)
    )


def consent_record(*, survey, annotator, accepted):
    """Append the annotator's answer to the current consent text; returns the row."""
    setup = setup_for(survey)
    version = setup.consent_version if setup else ""
    return ConsentResponse.objects.create(survey=survey, annotator=annotator, version=version, accepted=accepted)


def questionnaire_record(*, survey, annotator, phase, answers):
    """Store the answers once; a second submission (another tab, a retry) keeps the first. Returns
    `(row, created)`."""
    return QuestionnaireResponse.objects.get_or_create(
        survey=survey, annotator=annotator, phase=phase, defaults={"answers": answers}
    )


# --- export ---------------------------------------------------------------------------------------
def participant_names(survey):
    """`{annotator_pk: pseudonym}` for everyone with a consent or questionnaire answer: the dataset's
    pseudonym (A1, ...; the one the ratings exports use) where they have work, else P1, P2, ..."""
    known = pseudonym_map(dataset=survey.dataset)
    names, extra = {}, 0
    people = list(
        ConsentResponse.objects.filter(survey=survey).values_list("annotator_id", flat=True).order_by("pk")
    ) + list(QuestionnaireResponse.objects.filter(survey=survey).values_list("annotator_id", flat=True).order_by("pk"))
    for pk in people:
        if pk in names:
            continue
        if pk in known:
            names[pk] = known[pk]
        else:
            extra += 1
            names[pk] = f"P{extra}"
    return names


def _questions(setup, phase):
    if setup is None:
        return []
    return setup.pre_questions if phase == PRE else setup.post_questions


def export_rows(survey):
    """One row per questionnaire answered: participant (pseudonym), phase, consent version accepted,
    date (day only), then one column per question (multiple choice joined by "; ", "prefer not to
    say" as that text)."""
    setup = SurveyConsent.objects.filter(survey=survey).first()
    names = participant_names(survey)
    versions = {}
    for response in ConsentResponse.objects.filter(survey=survey, accepted=True).order_by("pk"):
        versions[response.annotator_id] = response.version
    rows = []
    for response in QuestionnaireResponse.objects.filter(survey=survey).order_by("phase", "pk"):
        row = {
            "participant": names.get(response.annotator_id, ""),
            "phase": response.phase,
            "consent_version": versions.get(response.annotator_id, ""),
            "date": response.created_at.date().isoformat(),
        }
        for question in _questions(setup, response.phase):
            value = response.answers.get(question["key"])
            row[question["key"]] = value
        rows.append(row)
    return rows


def export_text(survey, fmt="jsonl"):
    rows = export_rows(survey)
    if fmt == "jsonl":
        return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    setup = SurveyConsent.objects.filter(survey=survey).first()
    keys = ["participant", "phase", "consent_version", "date"]
    for question in [*_questions(setup, PRE), *_questions(setup, POST)]:
        if question["key"] not in keys:
            keys.append(question["key"])
    stream = io.StringIO()
    out = csv_writer(stream)
    out.writerow(keys)
    for row in rows:
        out.writerow([_cell(row.get(key, "")) for key in keys])
    return stream.getvalue()


def _cell(value):
    if value is None:
        return "prefer not to say"
    if isinstance(value, list):
        return "; ".join(value)
    return value


# --- summary (counts only) ------------------------------------------------------------------------
def summary(survey):
    """What the quality page shows staff: consent counts per version and, per question, counts of
    each answer (numbers: how many, median and range; texts: only how many). No individual rows."""
    setup = setup_for(survey)
    if setup is None:
        return None
    consent = []
    if setup.consent_text:
        latest = {}
        for response in ConsentResponse.objects.filter(survey=survey).order_by("pk"):
            latest[(response.annotator_id, response.version)] = response.accepted
        by_version = {}
        for (_, version), accepted in latest.items():
            counts = by_version.setdefault(version, {"version": version, "accepted": 0, "declined": 0})
            counts["accepted" if accepted else "declined"] += 1
        consent = sorted(by_version.values(), key=lambda row: row["version"])
    phases = []
    for phase, questions in ((PRE, setup.pre_questions), (POST, setup.post_questions)):
        if not questions:
            continue
        answers = list(
            QuestionnaireResponse.objects.filter(survey=survey, phase=phase).values_list("answers", flat=True)
        )
        phases.append(
            {
                "phase": phase,
                "respondents": len(answers),
                "questions": [_question_summary(q, answers) for q in questions],
            }
        )
    return {"consent": consent, "phases": phases}


def _question_summary(question, answers):
    key, kind = question["key"], question["kind"]
    values = [answer.get(key) for answer in answers if key in answer]
    prefer_not = sum(1 for value in values if value is None)
    given = [value for value in values if value is not None]
    row = {"key": key, "label": question["label"], "kind": kind, "prefer_not": prefer_not, "answered": len(given)}
    if kind in ("single", "multi"):
        counts = dict.fromkeys(question["options"], 0)
        for value in given:
            for option in value if isinstance(value, list) else [value]:
                if option in counts:
                    counts[option] += 1
        row["counts"] = list(counts.items())
    elif kind == "scale":
        row["counts"] = [(str(level), sum(1 for value in given if value == level)) for level in range(1, 6)]
    elif kind == "number":
        row["median"] = row["low"] = row["high"] = None
    if kind == "number" and len(given) >= MIN_FOR_SPREAD:
        row["median"] = statistics.median(given)
        row["low"], row["high"] = min(given), max(given)
    return row


# --- deletion on request --------------------------------------------------------------------------
def deletion_preview(*, survey, annotator):
    """What a deletion would remove and keep, in counts, and why it is refused (or "")."""
    questionnaires = QuestionnaireResponse.objects.filter(survey=survey, annotator=annotator).count()
    unsettled = ProlificSubmission.objects.filter(study__survey=survey, annotator=annotator).exclude(
        status__in=PROLIFIC_SETTLED
    )
    unreviewed_turk = MTurkAssignment.objects.filter(
        assignment__annotator=annotator, assignment__hit__survey=survey, status="Submitted"
    )
    refusal = ""
    if unreviewed_turk.exists():
        refusal = (
            "This participant's MTurk work is not yet approved or rejected: their worker id is needed to review "
            "and pay them. Review the work first, then delete their data."
        )
    if unsettled.exists():
        refusal = (
            "This participant's Prolific submission is not yet approved, rejected or returned: their Prolific "
            "id is needed to review and pay them. Review the submission first, then delete their data."
        )
    other_owners = (
        Survey.objects.filter(hits__assignments__annotator=annotator).exclude(owner_id=survey.owner_id).exists()
        or Survey.objects.filter(consent_responses__annotator=annotator).exclude(owner_id=survey.owner_id).exists()
    )
    return {
        "questionnaires": questionnaires,
        "consents_kept": ConsentResponse.objects.filter(survey=survey, annotator=annotator).count(),
        "ratings_kept": annotator.ratings.filter(survey=survey).count(),
        "tasks_kept": annotator.assignments.filter(hit__survey=survey).count(),
        "id_shared": other_owners,
        "refusal": refusal,
    }


def participant_delete(*, survey, annotator, requested_by, note=""):
    """Remove a participant's questionnaire answers and personal data from `survey`, keep their
    ratings under an anonymous id, and write the audit line. Returns the ParticipantDeletion.

    Personal data: the worker id (a Prolific, MTurk or platform id, or a label typed on the
    link) becomes `deleted-<random>` unless the same person works in another researcher's
    studies (then only this survey's copies go); network addresses and the platform's
    participant ids kept for this survey go. Consent answers stay: they record that the ratings
    kept were given with consent, and name no one once the id is gone."""
    preview = deletion_preview(survey=survey, annotator=annotator)
    if preview["refusal"]:
        raise DeletionRefused(preview["refusal"])
    pseudonym = participant_names(survey).get(annotator.pk) or pseudonym_map(dataset=survey.dataset).get(
        annotator.pk, "a participant"
    )
    anonymous = f"deleted-{secrets.token_hex(8)}"
    with transaction.atomic():
        removed = {
            "questionnaire answers": QuestionnaireResponse.objects.filter(survey=survey, annotator=annotator).delete()[
                0
            ]
        }
        removed["link addresses"] = (
            LinkIdentity.objects.filter(annotator=annotator, survey=survey).exclude(address=None).update(address=None)
        )
        removed["platform ids"] = LinkParticipant.objects.filter(annotator=annotator, survey=survey).update(
            participant_id=anonymous, address=None
        )
        removed["prolific ids"] = ProlificSubmission.objects.filter(annotator=annotator, study__survey=survey).update(
            participant_id=anonymous, address=None
        )
        removed["mturk ids"] = MTurkAssignment.objects.filter(
            assignment__annotator=annotator, assignment__hit__survey=survey
        ).update(worker_id=anonymous)
        removed["worker id"] = 0
        if not preview["id_shared"]:
            removed["worker id"] = Annotator.objects.filter(pk=annotator.pk).update(worker_id=anonymous)
        return ParticipantDeletion.objects.create(
            survey=survey, pseudonym=pseudonym, requested_by=requested_by, removed=removed, note=note[:300]
        )
