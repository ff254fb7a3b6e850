import html
import json
import re

import pytest
from django.core.cache import cache
from django.test import Client

from annotation import services
from annotation.models import Assignment, Rating, Response, Survey, WrittenResponse
from tests.annotation.link_helpers import start_task, started_task
from tests.annotation.studies_helpers import SYSTEMS, good_answers, make_survey
from tests.factories import load_dataset_records

pytestmark = pytest.mark.django_db

EVIL = "<script>alert('x')</script>"


def _fill(html, score=3):
    """POST data answering every radio group on a task page with `score` (instructed checks too)."""
    data = {}
    for name in sorted(set(re.findall(r'name="(score-\d+-[\w-]+)"', html))):
        data[name] = str(score)
    for item in re.findall(r'name="seconds-(\d+)"', html):
        data[f"seconds-{item}"] = "2.5"
    return data


def _start(client, survey, worker):
    return start_task(client, survey, worker)


def test_researcher_pages_need_login(client, researcher):
    survey = make_survey(researcher)
    for url in ("/surveys/", "/surveys/new/", f"/surveys/{survey.pk}/", f"/surveys/{survey.pk}/ratings.jsonl"):
        response = client.get(url)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_other_researchers_cannot_see_or_act_on_a_survey(client, researcher, other_researcher):
    survey = make_survey(researcher)
    client.force_login(other_researcher)
    assert survey.name not in client.get("/surveys/").content.decode()
    for url in (f"/surveys/{survey.pk}/", f"/surveys/{survey.pk}/preview/", f"/surveys/{survey.pk}/ratings.jsonl"):
        assert client.get(url).status_code == 404
    assert client.post(f"/surveys/{survey.pk}/close/").status_code == 404
    survey.refresh_from_db()
    assert survey.status == Survey.Status.LIVE


def test_create_form_shows_an_estimate_then_creates_a_draft(researcher_client, researcher):
    dataset = load_dataset_records(
        records=[
            {"context_id": f"c{i}", "context": ["hi"], "responses": [{"system": s, "text": "yo"} for s in SYSTEMS]}
            for i in range(10)
        ],
        name="d",
        owner=researcher,
    )
    form = {
        "dataset": dataset.pk,
        "name": "pilot",
        "task_type": "rate",
        "systems": "hred,human",
        "instructions": "Rate.",
        "contexts_per_hit": 5,
        "assignments_per_hit": 3,
        "attention_checks_per_hit": 1,
        "overlap_contexts": 0,
        "max_hits_per_annotator": 10,
        "assignment_minutes": 60,
        "reward_cents": 40,
        "attention_policy": "flag",
    }
    page = researcher_client.post("/surveys/new/", {**form, "estimate": "1"}).content.decode()
    assert "<dd>6</dd>" in page and "$2.40" in page and not Survey.objects.exists()
    bad = researcher_client.post("/surveys/new/", {**form, "gold_checks": "no arrows here"}).content.decode()
    assert "Line 1" in bad and not Survey.objects.exists()
    # said at the top too, with a link to the field: on a phone the field is screens below
    summary = bad.split('id="form-errors"', 1)[1].split("</div>", 1)[0]
    assert "The survey was not created." in summary and 'href="#id_gold_checks"' in summary and "Line 1" in summary
    assert 'id="form-errors"' not in page  # an estimate is no error
    form["gold_checks"] = "Is fire cold? | Why? => Yes, freezing. => 1,2"
    response = researcher_client.post("/surveys/new/", form)
    survey = Survey.objects.get(name="pilot")
    assert response.status_code == 302 and response["Location"] == f"/surveys/{survey.pk}/"
    assert survey.owner == researcher and survey.hits.count() == 2
    assert sorted(survey.systems.values_list("name", flat=True)) == ["hred", "human"]
    gold = survey.attention_checks.get()
    assert gold.turns == ["Is fire cold?", "Why?"] and gold.accepted_scores == [1, 2]
    assert survey.hits.first().items.filter(kind="gold").count() == 1
    researcher_client.post(f"/surveys/{survey.pk}/launch/")
    survey.refresh_from_db()
    assert survey.status == "live"


def test_annotator_page_escapes_text_and_hides_system_names(client, researcher):
    dataset = load_dataset_records(
        records=[
            {
                "context_id": "c0",
                "context": [EVIL, "second turn"],
                "references": ["the-hidden-reference"],
                "responses": [{"system": "secret-system-name", "text": f"{EVIL} reply"}],
            }
        ],
        name="evil",
        owner=researcher,
    )
    survey = services.survey_launch(survey=services.survey_create(dataset=dataset, name="e", owner=researcher))
    page = client.get(_start(client, survey, "w1")).content.decode()
    assert EVIL not in page and "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    assert "secret-system-name" not in page and "the-hidden-reference" not in page
    assert 'type="radio"' in page and "<legend>" in page and '<label class="choice">' in page


def test_annotator_completes_a_hit_and_a_double_submit_stores_once(client, researcher):
    survey = make_survey(researcher)
    url = _start(client, survey, "w1")
    page = client.get(url).content.decode()
    assert "Task 1 of at most 4" in page  # 4 HITs, under the cap of 10
    data = _fill(page)
    first = client.post(url, data)
    assert first.status_code == 302 and first["Location"].endswith("/done/")
    again = client.post(url, data)
    assert again.status_code == 302
    assert Rating.objects.count() == 12
    assert set(Rating.objects.values_list("seconds", flat=True)) == {2.5}


def test_unanswered_item_is_refused_server_side(client, researcher):
    survey = make_survey(researcher)
    url = _start(client, survey, "w1")
    data = _fill(client.get(url).content.decode())
    data.pop(next(iter(data)))
    response = client.post(url, data)
    page = response.content.decode()
    assert response.status_code == 400 and "answer every item" in page
    assert page.count(" checked") == sum(k.startswith("score-") for k in data), "the answers given so far are kept"
    assert Rating.objects.count() == 0


def test_another_annotator_cannot_open_or_submit_my_hit(client, researcher):
    survey = make_survey(researcher)
    url = _start(client, survey, "w1")
    data = _fill(client.get(url).content.decode())
    intruder = Client()
    start_task(intruder, survey, "w2")
    assert intruder.get(url).status_code == 403
    assert intruder.post(url, data).status_code == 403
    assert Rating.objects.count() == 0


def test_link_without_worker_generates_an_identifier_kept_in_a_cookie(client, researcher):
    survey = make_survey(researcher)
    assert "Your identifier" in client.get(f"/s/{survey.token}/").content.decode()
    response = client.post(f"/s/{survey.token}/", {"action": "start", "worker": ""})
    assignment = Assignment.objects.get(status="active")
    assert started_task(response) == f"/a/{assignment.token}/"
    assert assignment.annotator.worker_id.startswith("anon-") and len(assignment.annotator.worker_id) == 5 + 16
    start = client.get(f"/s/{survey.token}/").content.decode()
    assert "Continue your task" in start and f'href="/a/{assignment.token}/"' in start, "the cookie finds the task"


def test_preview_renders_the_hit_and_accepts_nothing(researcher_client, researcher):
    survey = make_survey(researcher, launch=False)
    page = researcher_client.get(f"/surveys/{survey.pk}/preview/").content.decode()
    assert "Preview" in page and "disabled" in page and "hred" not in page
    assert page.count('type="radio"') == 5 * (12 + 4)  # the instructed check's block has four replies too


def test_progress_review_and_export(client, researcher_client, researcher):
    survey = make_survey(researcher)
    url = _start(client, survey, "w1")
    client.post(url, _fill(client.get(url).content.decode(), score=4))
    detail = researcher_client.get(f"/surveys/{survey.pk}/").content.decode()
    assert "w1" in detail and f"/s/{survey.token}/" in detail
    progress = researcher_client.get(f"/surveys/{survey.pk}/progress.json").json()
    assert progress["ratings"] == 12 and progress["annotators"] == 1
    annotator = Assignment.objects.get(status="submitted").annotator
    assignment = Assignment.objects.get(status="submitted")
    review_url = f"/surveys/{survey.pk}/annotators/{annotator.pk}/review/"
    researcher_client.post(
        review_url, {"action": "reject", "assignment": assignment.pk, "reason": "too fast", "confirm": "yes"}
    )
    researcher_client.post(review_url, {"action": "exclude", "reason": "straight-lining"})
    page = researcher_client.get(f"/surveys/{survey.pk}/annotators/{annotator.pk}/").content.decode()
    assert "too fast" in page and "straight-lining" in page and "alice" in page
    lines = researcher_client.get(f"/surveys/{survey.pk}/ratings.jsonl").content.decode().splitlines()
    rows = [json.loads(line) for line in lines]
    assert len(rows) == 12 and set(rows[0]) >= {"context_id", "system", "worker", "score", "aspect"}
    assert {r["score"] for r in rows} == {4} and {r["worker"] for r in rows} == {"A1"}  # a pseudonym by default
    real = researcher_client.get(f"/surveys/{survey.pk}/ratings.jsonl?ids=real").content.decode().splitlines()
    assert {json.loads(line)["worker"] for line in real} == {"w1"}


def test_the_survey_page_offers_its_ratings_as_csv_too_pseudonymised_and_for_its_owner_only(
    client, researcher_client, researcher, other_researcher
):
    survey = make_survey(researcher)
    url = _start(client, survey, "w1")
    client.post(url, _fill(client.get(url).content.decode(), score=4))
    detail = researcher_client.get(f"/surveys/{survey.pk}/").content.decode()
    assert f'id="export-csv" href="/surveys/{survey.pk}/ratings.csv"' in detail
    exported = researcher_client.get(f"/surveys/{survey.pk}/ratings.csv")
    assert exported["Content-Type"].startswith("text/csv")
    assert exported["Content-Disposition"].endswith('ratings.csv"')
    rows = exported.content.decode().splitlines()
    assert rows[0].startswith("context_id,system,worker,score,aspect") and len(rows) == 1 + 12
    assert all(",A1,4," in row for row in rows[1:])  # the worker as a pseudonym, never w1
    other = Client()
    other.force_login(other_researcher)
    assert other.get(f"/surveys/{survey.pk}/ratings.csv").status_code == 404


def test_the_survey_form_names_the_built_in_crowd_as_the_survey_page_does_afterwards(researcher_client, researcher):
    survey = make_survey(researcher)
    form = researcher_client.get("/surveys/new/").content.decode()
    detail = researcher_client.get(f"/surveys/{survey.pk}/").content.decode()
    assert '<option value="local" selected>Built-in crowd (shareable link)</option>' in form
    assert "provider Built-in crowd (shareable link)" in detail


def test_write_task_page_takes_written_replies_for_review(client, researcher_client, researcher):
    survey = make_survey(researcher, n_contexts=2, contexts_per_hit=2, task_type="write", write_system_name="crowd")
    url = _start(client, survey, "w1")
    page = client.get(url).content.decode()
    items = re.findall(r'name="text-(\d+)"', page)
    assert len(items) == 2 and 'type="radio"' not in page
    client.post(url, {f"text-{item}": f"<b>reply</b> {item}" for item in items})
    review = researcher_client.get(f"/surveys/{survey.pk}/written/").content.decode()
    assert "&lt;b&gt;reply&lt;/b&gt;" in review
    written = WrittenResponse.objects.order_by("pk").first()
    researcher_client.post(f"/surveys/{survey.pk}/written/", {"written": written.pk, "action": "accept"})
    assert Response.objects.get(system__name="crowd").text == written.text
    # The researcher's pages count the written replies (they said "Ratings 0")
    detail = researcher_client.get(f"/surveys/{survey.pk}/").content.decode()
    assert re.search(r'<dt>Written replies</dt><dd id="ratings-count" data-key="ratings">2</dd>', detail)
    row = detail.split(">w1</a>", 1)[1].split("</tr>", 1)[0]
    assert re.match(r'</td><td class="num">1</td><td class="num">2</td>', row), row
    assert "Ratings" not in detail.split('id="progress"', 1)[-1].split("</table>", 1)[0]
    # nothing of a rating study: no ratings export, no planning of ratings, no scales or checks
    assert 'id="export"' not in detail and 'id="planning-title"' not in detail
    assert "<dt>Written replies collected</dt><dd>4</dd>" in detail  # 2 contexts x 2 annotators
    assert 'id="write-settings"' in detail and "Scales:" not in detail
    annotator = WrittenResponse.objects.first().assignment.annotator
    page = researcher_client.get(f"/surveys/{survey.pk}/annotators/{annotator.pk}/").content.decode()
    assert "Written replies included in analysis" in page and "Exclude this annotator's written replies" in page
    assert re.search(r'<td class="num">2</td><td class="num">0 / 0</td>', page)


def test_two_annotators_of_one_hit_see_the_same_items_and_overlap_is_shown_once(researcher):
    survey = make_survey(researcher, n_contexts=7, contexts_per_hit=3, overlap_contexts=1, assignments_per_hit=2)
    first, second = Client(), Client()
    pages = [c.get(_start(c, survey, f"w{i}")).content.decode() for i, c in enumerate((first, second))]
    fields = [sorted(set(re.findall(r'name="(score-[\w-]+)"', p))) for p in pages]
    assert fields[0] == fields[1] and len(fields[0]) == 4 * 4 + 4
    url = _start(first, survey, "w0")
    first.post(url, _fill(pages[0]))
    later = first.get(_start(first, survey, "w0")).content.decode()
    assert len(set(re.findall(r'name="(score-[\w-]+)"', later))) == 3 * 4 + 4, "the overlap context is not repeated"


def test_link_with_an_invalid_worker_id_asks_for_another(client, researcher):
    survey = make_survey(researcher)
    response = client.post(f"/s/{survey.token}/", {"action": "start", "worker": "<script>"})
    page = response.content.decode()
    assert response.status_code == 400 and "1-64 letters, digits or . _ - @ :" in page and "<script>" not in page
    assert not Assignment.objects.exclude(status="open").exists()


def test_a_hit_page_cached_without_the_overlap_still_shows_it_to_a_newcomer(researcher):
    # The page cache must key on the items shown: one annotator's HIT without the overlap context
    # (already rated) is not what the next annotator of that HIT sees.
    survey = make_survey(researcher, n_contexts=7, contexts_per_hit=3, overlap_contexts=1, assignments_per_hit=2)
    w0, w1, w2 = Client(), Client(), Client()
    first = w0.get(_start(w0, survey, "w0")).content.decode()
    w0.post(_start(w0, survey, "w0"), _fill(first))
    w1.get(_start(w1, survey, "w1"))  # takes HIT 1's other slot
    later = w0.get(_start(w0, survey, "w0")).content.decode()
    newcomer = w2.get(_start(w2, survey, "w2")).content.decode()
    assert (
        Assignment.objects.get(annotator__worker_id="w2").hit
        == Assignment.objects.get(annotator__worker_id="w0", status="active").hit
    )
    assert len(set(re.findall(r'name="(score-[\w-]+)"', later))) == 3 * 4 + 4
    assert len(set(re.findall(r'name="(score-[\w-]+)"', newcomer))) == 4 * 4 + 4


def test_the_survey_page_shows_the_exclusions_of_the_work_submitted_so_far(
    researcher_client, researcher, django_capture_on_commit_callbacks
):
    # Exclusions come from the quality report, recomputed after new work; the survey page said
    # "0 excluded" (and "no" per annotator) until someone opened the quality page.
    cache.clear()  # a recompute is queued once per survey id per 30 s; earlier tests reused this id
    survey = make_survey(researcher)
    for worker in ("w1", "w2"):
        assignment = services.assignment_claim(survey=survey, worker_id=worker)
        services.assignment_submit(assignment=assignment, answers=good_answers(assignment, seconds=0.1))
    with django_capture_on_commit_callbacks(execute=True):  # the queued recompute (eager Celery) runs
        detail = researcher_client.get(f"/surveys/{survey.pk}/").content.decode()
    assert '<dd data-key="excluded">0 (being checked…)</dd>' in detail  # not a bare "0"
    progress = researcher_client.get(f"/surveys/{survey.pk}/progress.json").json()
    assert progress["excluded"] == 2 and progress["exclusions_current"] is True  # both too fast
    detail = researcher_client.get(f"/surveys/{survey.pk}/").content.decode()
    assert '<dd data-key="excluded">2</dd>' in detail


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("fresh_cache")
def test_a_recompute_that_runs_at_once_shows_its_exclusions_on_the_same_page(researcher_client, researcher):
    # Outside a transaction (development: eager Celery, no ATOMIC_REQUESTS) the queued recompute runs
    # inside the request: the count read before it was the old report's ("0" with no "being checked").
    survey = make_survey(researcher)
    for worker in ("w1", "w2"):
        assignment = services.assignment_claim(survey=survey, worker_id=worker)
        services.assignment_submit(assignment=assignment, answers=good_answers(assignment, seconds=0.1))
    detail = researcher_client.get(f"/surveys/{survey.pk}/").content.decode()
    assert '<dd data-key="excluded">2</dd>' in detail


def test_a_paused_survey_offers_resume_and_says_it_was_resumed(researcher_client, researcher):
    survey = make_survey(researcher)
    services.survey_pause(survey=survey)
    page = researcher_client.get(f"/surveys/{survey.pk}/").content.decode()
    assert re.search(r'id="launch">Resume</button>', page)
    answer = researcher_client.post(f"/surveys/{survey.pk}/launch/", follow=True).content.decode()
    assert f"Survey {survey.name} resumed." in answer
    survey.refresh_from_db()
    assert survey.status == Survey.Status.LIVE


def _one_written_reply(researcher):
    """A writing survey where annotator w1 (in their own browser) wrote one reply: (survey, the reply)."""
    survey = make_survey(researcher, n_contexts=1, contexts_per_hit=1, task_type="write", write_system_name="crowd")
    annotator = Client()
    url = _start(annotator, survey, "w1")
    item = re.findall(r'name="text-(\d+)"', annotator.get(url).content.decode())[0]
    annotator.post(url, {f"text-{item}": "A short reply."})
    return survey, WrittenResponse.objects.get()


def test_a_very_long_written_reply_shows_its_start_and_a_link_to_the_whole(researcher_client, researcher):
    # A reply stored before replies were bounded may be megabytes long: the review page shows its
    # first 600 characters and links to the whole, which only the survey's researcher may read.
    survey, written = _one_written_reply(researcher)
    WrittenResponse.objects.filter(pk=written.pk).update(text="<b>" + "word " * 1_000_000 + "END")
    page = researcher_client.get(f"/surveys/{survey.pk}/written/").content.decode()
    assert len(page) < 20_000 and "END" not in page
    assert "&lt;b&gt;word word" in page and "<b>word" not in page
    whole_url = f"/surveys/{survey.pk}/written/{written.pk}/"
    assert f'href="{whole_url}"' in page and "Read the whole reply (5000006 characters)" in page
    whole = researcher_client.get(whole_url).content.decode()
    assert "&lt;b&gt;word word" in whole and "word END</div>" in whole and "<b>word" not in whole
    # In blocks (Chromium stops wrapping one run of megabytes), cut after spaces, nothing lost.
    blocks = [html.unescape(b) for b in re.findall(r"<div>([^<]*)</div>", whole.split("written-reply-whole", 1)[1])]
    assert "".join(blocks) == WrittenResponse.objects.get().text
    assert len(blocks) == 51 and all(len(b) <= 100_000 and b.endswith(" ") for b in blocks[:-1])
    researcher_client.logout()
    assert researcher_client.get(whole_url).status_code == 302  # to the login page


def test_another_researcher_cannot_read_a_written_reply_whole(client, researcher, other_researcher):
    survey, written = _one_written_reply(researcher)
    client.force_login(other_researcher)
    assert client.get(f"/surveys/{survey.pk}/written/{written.pk}/").status_code == 404


def test_a_short_written_reply_is_shown_whole_without_a_link(researcher_client, researcher):
    survey, written = _one_written_reply(researcher)
    page = researcher_client.get(f"/surveys/{survey.pk}/written/").content.decode()
    assert written.text in page and "Read the whole reply" not in page


@pytest.mark.parametrize("bad", ["abc", "", "1.5", "²"])
def test_a_review_form_naming_no_reply_or_task_by_number_is_told_so_and_changes_nothing(
    researcher_client, researcher, bad
):
    survey, written = _one_written_reply(researcher)
    answer = researcher_client.post(f"/surveys/{survey.pk}/written/", {"written": bad, "action": "accept"}, follow=True)
    assert answer.status_code == 200 and "Choose a reply from the list" in answer.content.decode()
    annotator = written.assignment.annotator
    for action in ("approve", "reject"):
        url = f"/surveys/{survey.pk}/annotators/{annotator.pk}/review/"
        answer = researcher_client.post(url, {"assignment": bad, "action": action, "confirm": "yes"}, follow=True)
        assert answer.status_code == 200 and "Choose a task from the list" in answer.content.decode()
    written.refresh_from_db()
    assert written.status == WrittenResponse.Status.PENDING
    assert not Assignment.objects.filter(status__in=("approved", "rejected")).exists()
