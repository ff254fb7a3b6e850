"""Consent and questionnaires: the steps before any claim (never on a GET), declining, answers
stored once per annotator, the pseudonymised export, the counts-only summary and a participant's
deletion on request (rows counted before and after)."""

import csv
import io
import json

import pytest
from django.urls import reverse

from annotation import services
from annotation.models import (
    Annotator,
    Assignment,
    ConsentResponse,
    ParticipantDeletion,
    QuestionnaireResponse,
    Rating,
    SurveyConsent,
)
from annotation.services import consent as consent_service
from annotation.services.questionnaire_spec import PREFER_NOT, SpecError, parse_questions
from tests.annotation.studies_helpers import good_answers, make_survey

pytestmark = pytest.mark.django_db

PRE = """single | age | Your age group | 18-29; 30-44; 45+
multi | langs | Languages you speak well | English; German; French
scale | fluency | How fluent is your English? | not at all; native
text | job | Your occupation
number | years | Years using chatbots | 0-50"""
POST = "scale | effort | How hard was the task? | easy; hard"


def _survey(owner, **extra):
    survey = make_survey(owner, n_contexts=6, contexts_per_hit=3, assignments_per_hit=2, **extra)
    consent_service.consent_setup_save(
        survey=survey,
        consent_text="We study chatbots. <b>Your answers</b> are kept pseudonymously.",
        consent_version="2.1",
        pre_questions=parse_questions(PRE),
        post_questions=parse_questions(POST),
    )
    return survey


def _start(client, survey):
    return client.post(reverse("annotation:task_entry", args=[survey.token]), {"action": "start"})


PRE_ANSWERS = {
    "q_age": "30-44",
    "q_langs": ["English", "French"],
    "q_fluency": "4",
    "q_job_skip": PREFER_NOT,
    "q_years": "3",
}


def test_question_lines_are_parsed_and_bad_ones_are_named_by_line():
    questions = parse_questions(PRE)
    assert [q["kind"] for q in questions] == ["single", "multi", "scale", "text", "number"]
    assert questions[4]["min"] == 0 and questions[4]["max"] == 50
    for bad, words in [
        ("single | age | Age | only one", "line 1: a single choice question needs at least two options"),
        ("\nchoose | x | Q", "line 2: the kind 'choose'"),
        ("text | 1x | Q", "the key '1x'"),
        ("text | a | Q\ntext | a | R", "line 2: the key 'a' is used twice"),
    ]:
        with pytest.raises(SpecError, match=words):
            parse_questions(bad)


def test_start_leads_to_consent_and_claims_nothing_until_the_steps_are_done(client, researcher):
    survey = _survey(researcher)
    response = _start(client, survey)
    assert response.status_code == 302 and response["Location"] == f"/c/{survey.token}/consent/"
    assert not Assignment.objects.filter(annotator__isnull=False).exists()
    page = client.get(response["Location"])
    assert b"Version 2.1" in page.content and b"&lt;b&gt;Your answers&lt;/b&gt;" in page.content, "escaped"
    client.get(response["Location"])  # a GET records and claims nothing
    assert ConsentResponse.objects.count() == 0 and not Assignment.objects.filter(status="active").exists()
    accepted = client.post(response["Location"], {"choice": "accept"})
    assert accepted["Location"] == f"/c/{survey.token}/questions/pre/"
    assert ConsentResponse.objects.get().version == "2.1"
    assert client.get(accepted["Location"]).status_code == 200
    assert not Assignment.objects.filter(status="active").exists(), "the questionnaire's GET claims nothing"
    missing = client.post(accepted["Location"], {"q_age": "30-44"})
    assert missing.status_code == 400 and QuestionnaireResponse.objects.count() == 0
    done = client.post(accepted["Location"], PRE_ANSWERS)
    assignment = Assignment.objects.get(status="active")
    assert done["Location"] == f"/a/{assignment.token}/"
    stored = QuestionnaireResponse.objects.get()
    assert stored.answers == {"age": "30-44", "langs": ["English", "French"], "fluency": 4, "job": None, "years": 3}
    # shown once: the next Start goes straight to a task, and a second POST keeps the first answers
    client.post(accepted["Location"], {**PRE_ANSWERS, "q_age": "45+"})
    assert QuestionnaireResponse.objects.get().answers["age"] == "30-44"


def test_declining_ends_politely_and_claims_no_work(client, researcher):
    survey = _survey(researcher)
    location = _start(client, survey)["Location"]
    page = client.post(location, {"choice": "decline"})
    assert page.status_code == 200 and b"Thank you for your time" in page.content
    assert ConsentResponse.objects.get().accepted is False
    assert not Assignment.objects.filter(annotator__isnull=False).exists()
    assert _start(client, survey)["Location"] == location, "asked again, never given work"


def test_a_changed_consent_version_is_asked_again(client, researcher):
    survey = _survey(researcher)
    location = _start(client, survey)["Location"]
    client.post(location, {"choice": "accept"})
    SurveyConsent.objects.filter(survey=survey).update(consent_version="3")
    assert _start(client, survey)["Location"] == location


def _work(client, survey):
    """Accept, answer the pre-task questions, submit one task; returns the assignment."""
    location = _start(client, survey)["Location"]
    client.post(location, {"choice": "accept"})
    client.post(f"/c/{survey.token}/questions/pre/", PRE_ANSWERS)
    assignment = Assignment.objects.filter(status="active").order_by("-pk").first()
    services.assignment_submit(assignment=assignment, answers=good_answers(assignment), annotator=assignment.annotator)
    return assignment


def test_the_post_questionnaire_follows_the_work_once(client, researcher):
    survey = _survey(researcher)
    assignment = _work(client, survey)
    done = client.get(reverse("annotation:task_done", args=[assignment.token]))
    assert b'id="post-questionnaire"' in done.content
    client.post(f"/c/{survey.token}/questions/post/", {"q_effort": "2"})
    assert QuestionnaireResponse.objects.filter(phase="post").get().answers == {"effort": 2}
    done = client.get(reverse("annotation:task_done", args=[assignment.token]))
    assert b'id="post-questionnaire"' not in done.content


def test_prolific_decline_returns_with_the_no_consent_code(client, researcher, settings):
    settings.PUBLIC_BASE_URL = "https://ratelab.example"
    from annotation.crowd.prolific.provider import ProlificProvider
    from annotation.crowd.prolific.study import study_settings

    survey = _survey(researcher, provider="prolific", launch=False)
    study = study_settings(survey)
    study.study_id = "S1"
    study.save()
    survey.status = "live"
    survey.save()
    body = ProlificProvider(client=object()).study_body(survey, study)
    codes = {code["code_type"]: code for code in body["completion_codes"]}
    assert codes["NO_CONSENT"]["code"] == study.no_consent_code
    assert codes["NO_CONSENT"]["actions"] == [{"action": "REQUEST_RETURN"}]
    params = {"PROLIFIC_PID": "pid1", "STUDY_ID": "S1", "SESSION_ID": "sess1"}
    start = client.post(reverse("annotation:prolific_entry", args=[survey.token]), params)
    assert start["Location"] == f"/c/{survey.token}/consent/"
    assert not Assignment.objects.filter(annotator__isnull=False).exists()
    page = client.post(start["Location"], {"choice": "decline"})
    url = f"https://app.prolific.com/submissions/complete?cc={study.no_consent_code}"
    assert url.encode() in page.content
    assert not Assignment.objects.filter(annotator__isnull=False).exists()


def test_the_export_is_pseudonymised_and_the_csv_neutralised(client, researcher):
    survey = _survey(researcher)
    _work(client, survey)
    QuestionnaireResponse.objects.filter(phase="pre").update(answers={**PRE_ANSWERS_STORED, "job": "=HYPERLINK(1)"})
    worker = Annotator.objects.get(assignments__hit__survey=survey).worker_id
    rows = [json.loads(line) for line in consent_service.export_text(survey, "jsonl").splitlines()]
    assert (
        rows[0]["participant"] == "A1"
        and rows[0]["consent_version"] == "2.1"
        and rows[0]["langs"]
        == [
            "English",
            "French",
        ]
    )
    text = consent_service.export_text(survey, "csv")
    assert worker not in text
    table = list(csv.DictReader(io.StringIO(text)))
    assert table[0]["job"] == "'=HYPERLINK(1)" and table[0]["langs"] == "English; French"
    client.force_login(researcher)
    download = client.get(reverse("annotation:questionnaire_export", args=[survey.pk, "csv"]))
    assert download.status_code == 200 and "attachment" in download["Content-Disposition"]


PRE_ANSWERS_STORED = {"age": "30-44", "langs": ["English", "French"], "fluency": 4, "job": None, "years": 3}


def test_the_summary_counts_answers_and_lists_no_one(client, researcher):
    survey = _survey(researcher)
    _work(client, survey)
    summary = consent_service.summary(survey)
    assert summary["consent"] == [{"version": "2.1", "accepted": 1, "declined": 0}]
    questions = {q["key"]: q for q in summary["phases"][0]["questions"]}
    assert dict(questions["age"]["counts"]) == {"18-29": 0, "30-44": 1, "45+": 0}
    assert dict(questions["langs"]["counts"]) == {"English": 1, "German": 0, "French": 1}
    assert questions["job"]["prefer_not"] == 1 and questions["years"]["answered"] == 1
    assert questions["years"]["median"] is None, "one person's number is not shown as a median"


def test_others_may_not_download_or_delete(client, researcher, other_researcher):
    survey = _survey(researcher)
    client.force_login(other_researcher)
    assert client.get(reverse("annotation:questionnaire_export", args=[survey.pk, "csv"])).status_code == 404
    assert client.get(reverse("annotation:participant_deletion", args=[survey.pk])).status_code == 404
    assert client.get(reverse("annotation:survey_datasheet", args=[survey.pk, "md"])).status_code == 404


def _counts():
    from django.apps import apps

    return {model.__name__: model.objects.count() for model in apps.get_app_config("annotation").get_models()}


def test_deletion_removes_answers_and_ids_keeps_ratings_and_writes_an_audit_line(client, researcher):
    survey = _survey(researcher)
    _work(client, survey)
    client.post(f"/c/{survey.token}/questions/post/", {"q_effort": "2"})
    other = client.__class__()
    _work(other, survey)
    annotator = Annotator.objects.filter(questionnaire_responses__isnull=False).distinct().order_by("pk").first()
    worker = annotator.worker_id
    before = _counts()
    ratings_before = list(Rating.objects.filter(annotator=annotator).values_list("pk", "score"))
    researcher_client = client.__class__()
    researcher_client.force_login(researcher)
    url = reverse("annotation:participant_deletion", args=[survey.pk])
    preview = researcher_client.post(url, {"participant": worker, "action": "preview"})
    assert b"2 questionnaire answers" in preview.content and _counts() == before, "a preview changes nothing"
    researcher_client.post(url, {"participant": worker, "action": "delete", "note": "asked by email"})
    after = _counts()
    assert after["QuestionnaireResponse"] == before["QuestionnaireResponse"] - 2
    assert after["ParticipantDeletion"] == before["ParticipantDeletion"] + 1
    unchanged = {k: v for k, v in before.items() if k not in ("QuestionnaireResponse", "ParticipantDeletion")}
    assert {k: after[k] for k in unchanged} == unchanged, "nothing else is deleted"
    annotator.refresh_from_db()
    assert annotator.worker_id.startswith("deleted-") and annotator.worker_id != worker
    assert list(Rating.objects.filter(annotator=annotator).values_list("pk", "score")) == ratings_before
    audit = ParticipantDeletion.objects.get()
    assert audit.pseudonym == "A1" and audit.removed["questionnaire answers"] == 2 and audit.requested_by == researcher
    assert worker not in json.dumps(audit.removed) + audit.pseudonym + audit.note
    page = researcher_client.get(url)
    assert b"asked by email" in page.content and worker.encode() not in page.content
    # the other participant's answers are untouched
    assert QuestionnaireResponse.objects.filter(phase="pre").count() == 1


def test_an_unknown_participant_id_changes_nothing(client, researcher):
    survey = _survey(researcher)
    before = _counts()
    client.force_login(researcher)
    page = client.post(reverse("annotation:participant_deletion", args=[survey.pk]), {"participant": "nobody"})
    assert page.status_code == 400 and b"No participant of this survey" in page.content and _counts() == before


def test_the_survey_form_sets_consent_and_questions_up_and_names_a_bad_line(client, researcher):
    from tests.annotation.studies_helpers import dataset_records, survey_form_fields
    from tests.factories import load_dataset_records

    dataset = load_dataset_records(records=dataset_records(4), name="form-ds", owner=researcher)
    client.force_login(researcher)
    fields = survey_form_fields(dataset, name="with-consent", provider="local")
    bad = client.post(reverse("annotation:survey_new"), {**fields, "consent-pre_questions": "single | age | Age | one"})
    assert bad.status_code == 200 and b"line 1: a single choice question needs at least two options" in bad.content
    assert not SurveyConsent.objects.exists()
    client.post(
        reverse("annotation:survey_new"),
        {**fields, "consent-consent_text": "Info.", "consent-consent_version": "7", "consent-pre_questions": PRE},
    )
    setup = SurveyConsent.objects.get(survey__name="with-consent")
    assert setup.consent_version == "7" and len(setup.pre_questions) == 5 and setup.post_questions == []
    turk = survey_form_fields(dataset, name="turk-consent", provider="mturk")
    refused = client.post(reverse("annotation:survey_new"), {**turk, "consent-consent_text": "Info."})
    assert b"Mechanical Turk surveys cannot have a consent page" in refused.content


def test_on_prolific_the_steps_come_first_and_the_closing_questions_before_the_code(client, researcher, settings):
    from annotation.crowd.prolific.study import study_settings

    settings.PUBLIC_BASE_URL = "https://ratelab.example"
    survey = _survey(researcher, provider="prolific", launch=False)
    study = study_settings(survey)
    study.study_id = "S2"
    study.save()
    survey.status = "live"
    survey.save()
    params = {"PROLIFIC_PID": "pid2", "STUDY_ID": "S2", "SESSION_ID": "sess2"}
    consent_url = client.post(reverse("annotation:prolific_entry", args=[survey.token]), params)["Location"]
    pre_url = client.post(consent_url, {"choice": "accept"})["Location"]
    task = client.post(pre_url, PRE_ANSWERS)["Location"]
    assignment = Assignment.objects.get(status="active")
    assert task == f"/a/{assignment.token}/" and assignment.annotator.worker_id == "pid2"
    services.assignment_submit(assignment=assignment, answers=good_answers(assignment), annotator=assignment.annotator)
    finish = reverse("annotation:prolific_finish", args=[survey.token])
    assert client.get(finish)["Location"] == f"/c/{survey.token}/questions/post/"
    back = client.post(f"/c/{survey.token}/questions/post/", {"q_effort": "4"})
    assert back["Location"] == finish
    assert client.get(finish)["Location"].endswith(f"cc={study.completed_code}")


def test_deletion_waits_for_an_unreviewed_prolific_submission_then_clears_its_id(client, researcher, settings):
    from annotation.crowd.prolific.study import study_settings
    from annotation.models import ProlificSubmission

    settings.PUBLIC_BASE_URL = "https://ratelab.example"
    survey = _survey(researcher, provider="prolific", launch=False)
    study = study_settings(survey)
    study.study_id = "S3"
    study.save()
    survey.status = "live"
    survey.save()
    params = {"PROLIFIC_PID": "pid3", "STUDY_ID": "S3", "SESSION_ID": "sess3"}
    consent_url = client.post(reverse("annotation:prolific_entry", args=[survey.token]), params)["Location"]
    client.post(consent_url, {"choice": "accept"})
    client.post(f"/c/{survey.token}/questions/pre/", PRE_ANSWERS)
    submission = ProlificSubmission.objects.get()
    submission.status = "AWAITING REVIEW"
    submission.save()
    before = _counts()
    with pytest.raises(consent_service.DeletionRefused, match="not yet approved"):
        consent_service.participant_delete(survey=survey, annotator=submission.annotator, requested_by=researcher)
    assert _counts() == before
    ProlificSubmission.objects.filter(pk=submission.pk).update(status="APPROVED")
    consent_service.participant_delete(survey=survey, annotator=submission.annotator, requested_by=researcher)
    submission.refresh_from_db()
    assert submission.participant_id.startswith("deleted-") and submission.address is None
    assert submission.annotator.worker_id == submission.participant_id
    assert not QuestionnaireResponse.objects.exists() and ParticipantDeletion.objects.count() == 1


def test_editing_a_draft_sets_consent_up_and_shows_it_filled_in(researcher_client, researcher):
    from tests.annotation.test_drafts import edit_fields

    draft = make_survey(researcher, n_contexts=4, name="draft", launch=False)
    url = reverse("annotation:survey_edit", args=[draft.pk])
    researcher_client.post(url, {**edit_fields(draft), "consent-consent_text": "Info.", "consent-pre_questions": POST})
    setup = SurveyConsent.objects.get(survey=draft)
    draft.refresh_from_db()
    assert setup.consent_version == "1" and setup.pre_questions[0]["key"] == "effort" and draft.asks_before_tasks
    page = researcher_client.get(url).content.decode()
    assert "scale | effort | How hard was the task? | easy; hard" in page
    researcher_client.post(url, edit_fields(draft))  # emptied: no steps any more
    draft.refresh_from_db()
    assert not SurveyConsent.objects.exists() and not draft.asks_before_tasks
