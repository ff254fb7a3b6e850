"""Researcher pages name a worker by their real id for the study's owner only.

Real worker ids (MTurk worker ids, PROLIFIC_PIDs, link-platform ids, local labels) are personal data
collected for one researcher's study. Staff, who may read every study, and admins, who may change
them, see the dataset's pseudonyms (A1, A2, ...; annotation/selectors/pseudonyms.py) on every page that names a
worker, and the forms that act on one name the worker's row, not their id.
"""

import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.messages import get_messages
from django.urls import reverse

from annotation import services
from annotation.crowd.link_platform import platform_settings
from annotation.crowd.prolific.study import study_settings
from annotation.models import Annotator, LinkParticipant, ProlificSubmission, Survey, WrittenResponse
from annotation.quality.recompute import quality_recompute
from annotation.quality.services import exclusion_override
from annotation.selectors.pseudonyms import pseudonym_map
from annotation.services import mturk as mturk_services
from tests.annotation.mturk_helpers import make_survey as make_mturk_survey
from tests.annotation.mturk_helpers import publish_all
from tests.annotation.pairwise_helpers import make_pairwise_survey, pairwise_answers
from tests.annotation.prolific_helpers import make_prolific_survey
from tests.annotation.studies_helpers import good_answers, make_survey

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(db):
    """May read every study, change none of others'."""
    return get_user_model().objects.create_user("stella", password="x", is_staff=True)


@pytest.fixture
def admin(db):
    """May read and change every study; alice's workers' ids are still none of theirs."""
    return get_user_model().objects.create_user("root", password="x", is_staff=True, is_superuser=True)


def work(survey, worker, *, provider=Survey.Provider.LOCAL, answers=good_answers):
    assignment = services.assignment_claim(survey=survey, worker_id=worker, provider=provider)
    services.assignment_submit(assignment=assignment, answers=answers(assignment))
    return assignment.annotator


def pseudonym(annotator, survey):
    return pseudonym_map(dataset=survey.dataset)[annotator.pk]


def html(client, user, url, **data):
    client.force_login(user)
    response = client.post(url, data) if data else client.get(url)
    assert response.status_code == 200, url
    return response.content.decode()


@pytest.fixture
def rated(researcher):
    """Alice's rating survey: two workers rated, and her notes about the first name him."""
    survey = make_survey(researcher, name="chat-study")
    first, second = work(survey, "WREAL-ONE"), work(survey, "WREAL-TWO")
    services.annotator_exclude(survey=survey, annotator=first, actor=researcher, reason="WREAL-ONE clicked at random")
    exclusion_override(survey=survey, annotator=second, excluded=False, note="WREAL-TWO is careful", user=researcher)
    quality_recompute(survey=survey)  # the quality pages show the cached report
    return survey, first


def rated_pages(survey, annotator):
    return [
        reverse("annotation:survey_detail", args=[survey.pk]),
        reverse("annotation:survey_annotator", args=[survey.pk, annotator.pk]),
        reverse("annotation:quality_survey", args=[survey.pk]),
        reverse("annotation:quality_annotator", args=[survey.pk, annotator.pk]),
    ]


def test_the_owner_sees_her_workers_real_ids_on_the_survey_annotator_and_quality_pages(client, researcher, rated):
    survey, first = rated
    for url in rated_pages(survey, first):
        assert "WREAL-ONE" in html(client, researcher, url), url
    assert "Annotator WREAL-ONE" in html(client, researcher, rated_pages(survey, first)[1])


@pytest.mark.parametrize("reader", ["staff", "admin"])
def test_staff_and_admins_see_pseudonyms_and_no_real_id_on_the_survey_annotator_and_quality_pages(
    client, rated, reader, request
):
    survey, first = rated
    user = request.getfixturevalue(reader)
    name = pseudonym(first, survey)
    for url in rated_pages(survey, first):
        page = html(client, user, url)
        assert name in page, url
        assert "WREAL-" not in page, url
    annotator_page = html(client, user, rated_pages(survey, first)[1])
    assert f"Annotator {name}" in annotator_page
    assert f"{name} clicked at random" in annotator_page  # the review's reason, its worker renamed
    assert f"Annotator {name}" in html(client, user, rated_pages(survey, first)[3])


def test_an_admin_rejecting_work_is_asked_about_the_pseudonym_and_the_owner_about_the_real_id(
    client, researcher, admin, rated
):
    survey, first = rated
    slot = first.assignments.get()
    url = reverse("annotation:survey_review", args=[survey.pk, first.pk])
    form = {"action": "reject", "assignment": slot.pk, "reason": "random"}
    assert "WREAL-ONE?" in html(client, researcher, url, **form)
    page = html(client, admin, url, **form)
    assert f"of {pseudonym(first, survey)}?" in page and "WREAL-" not in page


def test_written_replies_name_their_writer_by_real_id_for_the_owner_only(client, researcher, staff):
    survey = make_survey(researcher, name="write-study", task_type="write", write_system_name="people")
    writer = work(survey, "WWRITER-ONE")
    reply = WrittenResponse.objects.filter(assignment__annotator=writer).first()
    pages = [
        reverse("annotation:survey_written", args=[survey.pk]),
        reverse("annotation:survey_written_reply", args=[survey.pk, reply.pk]),
    ]
    for url in pages:
        assert "WWRITER-ONE" in html(client, researcher, url)
        page = html(client, staff, url)
        assert pseudonym(writer, survey) in page and "WWRITER-" not in page


def test_the_pairwise_quality_section_names_judges_by_real_id_for_the_owner_only(client, researcher, staff):
    survey = make_pairwise_survey(researcher, name="pair-study")
    judges = [work(survey, f"WJUDGE-{n}", answers=pairwise_answers) for n in (1, 2)]
    quality_recompute(survey=survey)
    url = reverse("annotation:quality_survey", args=[survey.pk])
    owner_page = html(client, researcher, url)
    assert 'id="pairwise-rules"' in owner_page and "WJUDGE-1" in owner_page and "WJUDGE-2" in owner_page
    page = html(client, staff, url)
    assert all(pseudonym(judge, survey) in page for judge in judges) and "WJUDGE-" not in page


def test_the_prolific_page_and_its_block_question_name_participants_by_real_id_for_the_owner_only(
    client, researcher, staff, admin
):
    survey = make_prolific_survey(researcher, name="prolific-study")
    participant = work(survey, "PIDREAL0000000000000001", provider=Survey.Provider.PROLIFIC)
    row = ProlificSubmission.objects.create(
        study=study_settings(survey),
        session_id="SESSION1",
        participant_id=participant.worker_id,
        annotator=participant,
        status="AWAITING REVIEW",
        confirmed=True,
    )
    url = reverse("annotation:prolific_survey", args=[survey.pk])
    action = reverse("annotation:prolific_action", args=[survey.pk])
    assert "PIDREAL0000000000000001" in html(client, researcher, url)
    assert "Exclude and block PIDREAL0000000000000001?" in html(
        client, researcher, action, action="block", submission=row.pk, reason="x"
    )
    name = pseudonym(participant, survey)
    for user in (staff, admin):
        page = html(client, user, url)
        assert name in page and "PIDREAL" not in page
    question = html(client, admin, action, action="block", submission=row.pk, reason="x")
    assert f"Exclude and block {name}?" in question and "PIDREAL" not in question


@pytest.fixture
def link_survey(researcher):
    survey = make_survey(researcher, name="link-study")
    Survey.objects.filter(pk=survey.pk).update(provider=Survey.Provider.LINK)
    survey.refresh_from_db()
    platform_settings(survey)
    participant = work(survey, "LINKREAL-ONE", provider=Survey.Provider.LINK)
    LinkParticipant.objects.create(survey=survey, participant_id="LINKREAL-ONE", annotator=participant)
    return survey, participant


def test_the_link_platform_page_names_participants_by_real_id_for_the_owner_only(
    client, researcher, staff, admin, link_survey
):
    survey, participant = link_survey
    url = reverse("annotation:link_survey", args=[survey.pk])
    assert "LINKREAL-ONE" in html(client, researcher, url)
    for user in (staff, admin):
        page = html(client, user, url)
        assert pseudonym(participant, survey) in page and "LINKREAL" not in page


@pytest.mark.parametrize("reader", ["researcher", "admin"])
def test_a_participants_confirm_button_names_their_row_and_confirms_them(client, link_survey, reader, request):
    survey, _participant = link_survey
    row = LinkParticipant.objects.get(survey=survey)
    page = html(client, request.getfixturevalue(reader), reverse("annotation:link_survey", args=[survey.pk]))
    assert f'name="row" value="{row.pk}"' in page
    client.post(reverse("annotation:link_action", args=[survey.pk]), {"action": "confirm", "row": row.pk})
    row.refresh_from_db()
    assert row.confirmed


@pytest.fixture
def turk(stubber, researcher):
    survey = make_mturk_survey(researcher, n_hits=2)
    publish_all(stubber, survey)
    mturk_services.mturk_assignment_open(
        hit=survey.hits.get(position=0), assignment_id="3ASGNAMES", worker_id="AWORKERNAMES"
    )
    return survey


def test_the_mturk_page_names_workers_by_real_id_for_the_owner_only(client, researcher, staff, admin, turk):
    url = reverse("annotation:mturk_survey", args=[turk.pk])
    assert "AWORKERNAMES" in html(client, researcher, url)
    worker = Annotator.objects.get(worker_id="AWORKERNAMES")
    for user in (staff, admin):
        page = html(client, user, url)
        assert pseudonym(worker, turk) in page and "AWORKERNAMES" not in page


def test_the_mturk_block_question_names_the_worker_as_the_page_does_and_carries_no_id(client, researcher, admin, turk):
    worker = Annotator.objects.get(worker_id="AWORKERNAMES")
    action = reverse("annotation:mturk_action", args=[turk.pk])
    form = {"action": "block", "annotator": worker.pk, "reason": "Answered at random"}
    assert "Worker: <code>AWORKERNAMES</code>" in html(client, researcher, action, **form)
    question = html(client, admin, action, **form)
    assert f"Worker: <code>{pseudonym(worker, turk)}</code>" in question and "AWORKERNAMES" not in question
    assert f'name="annotator" value="{worker.pk}"' in question


def test_a_block_naming_an_annotator_who_did_no_work_here_is_refused_like_an_unknown_id(client, researcher, turk):
    stranger = Annotator.objects.create(provider="mturk", worker_id="ASTRANGER")
    client.force_login(researcher)
    response = client.post(
        reverse("annotation:mturk_action", args=[turk.pk]),
        {"action": "block", "annotator": stranger.pk, "reason": "x", "confirm": "yes"},
    )
    notes = [str(m) for m in get_messages(response.wsgi_request)]
    assert response.status_code == 302 and "Only workers MTurk lists on your own surveys can be blocked" in notes[-1]


def test_a_participant_who_opened_the_link_but_holds_no_work_is_named_without_their_id(
    client, researcher, staff, link_survey
):
    """Pseudonyms number the workers who rated or hold a task: one who only opened the link has none."""
    survey, _participant = link_survey
    idle = Annotator.objects.create(provider=Survey.Provider.LINK, worker_id="LINKIDLE-TWO")
    LinkParticipant.objects.create(survey=survey, participant_id="LINKIDLE-TWO", annotator=idle)
    url = reverse("annotation:link_survey", args=[survey.pk])
    assert "LINKIDLE-TWO" in html(client, researcher, url)
    page = html(client, staff, url)
    assert "a participant with no work yet" in page and "LINKIDLE" not in page


def shown_order(page, names):
    """`names` in the order the page shows them as an element's text (not inside a token or URL)."""
    return sorted(names, key=lambda name: re.search(rf">\s*{re.escape(name)}\s*<", page).start())


def test_staff_read_the_survey_page_in_pseudonym_order_which_tells_nothing_of_the_real_ids(client, researcher, staff):
    # rated in the order zeta, alpha, mike: the owner's page lists them by id (alpha, mike, zeta),
    # so pseudonyms listed in that order would tell staff how the real ids sort
    survey = make_survey(researcher, name="ordered-study")
    workers = [work(survey, worker) for worker in ("WZETA", "WALPHA", "WMIKE")]
    url = reverse("annotation:survey_detail", args=[survey.pk])

    owner_page = html(client, researcher, url)
    assert shown_order(owner_page, ["WZETA", "WALPHA", "WMIKE"]) == ["WALPHA", "WMIKE", "WZETA"]
    staff_page = html(client, staff, url)
    assert [pseudonym(w, survey) for w in workers] == ["A1", "A2", "A3"]
    assert shown_order(staff_page, ["A3", "A2", "A1"]) == ["A1", "A2", "A3"]


def test_staff_read_the_link_page_confirmed_first_then_in_pseudonym_order(client, researcher, staff):
    survey = make_survey(researcher, name="linked-study", provider=Survey.Provider.LINK)
    workers = [work(survey, worker, provider=Survey.Provider.LINK) for worker in ("PZETA", "PALPHA", "PMIKE")]
    for annotator in workers:
        LinkParticipant.objects.create(survey=survey, participant_id=annotator.worker_id, annotator=annotator)
    LinkParticipant.objects.filter(participant_id="PMIKE").update(confirmed=True)
    staff_page = html(client, staff, reverse("annotation:link_survey", args=[survey.pk]))
    names = [pseudonym(w, survey) for w in workers]  # A1 zeta, A2 alpha, A3 mike (confirmed)
    assert shown_order(staff_page, names) == [names[2], names[0], names[1]]
