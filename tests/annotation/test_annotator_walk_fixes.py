"""Annotator-side findings of the browser walk of 2026-11-29 (F08-F13): what the pages say."""

import re

import pytest
from django.test import Client

from annotation import services
from annotation.crowd.link_platform import platform_settings
from annotation.forms.surveys import SurveyForm
from annotation.models import Dataset, HITItem, LinkPlatform, Survey
from annotation.services.estimates import survey_estimate
from annotation.views.task_page.items import hit_blocks
from tests.annotation.link_helpers import start_task
from tests.annotation.pairwise_helpers import make_pairwise_survey
from tests.annotation.prolific_helpers import entry, make_prolific_survey, pid, publish, session
from tests.annotation.studies_helpers import dataset_records, good_answers, make_survey, survey_form_fields
from tests.factories import load_dataset_records

pytestmark = pytest.mark.django_db


def _text(html):
    """The page's visible words, tags dropped and spaces joined."""
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


# --- F10: a pair's sides are not lettered like the speakers above them ---------------------------


def test_pair_sides_are_numbered_while_speakers_keep_their_letters(researcher):
    # The dataset's second turn is spoken by "B" (studies_helpers.dataset_records).
    survey = make_pairwise_survey(researcher, n_contexts=6, assignments_per_hit=1)
    client = Client()
    page = client.get(start_task(client, survey, "w1")).content.decode()
    assert "<bdi>B</bdi>:</span>" in page, "the speakers are shown as the dataset names them"
    text = _text(page)
    assert "Reply 1:" in text and "Reply 2:" in text
    assert "Reply A" not in text and "Reply B" not in text and "reply A" not in text
    # The choices read as the sides do; the values sent stay a / b.
    assert re.search(r'value="a" data-key="1"[^>]*>\s*<span class="value">Reply 1</span>', page)
    assert re.search(r'value="b" data-key="2"[^>]*>\s*<span class="value">Reply 2</span>', page)
    assert "reply 1 and reply 2" in text, "the default instructions name the sides as the page does"


def test_old_default_pairwise_instructions_read_with_the_new_side_names(researcher):
    survey = make_pairwise_survey(researcher, n_contexts=6, assignments_per_hit=1)
    old = "You will read short conversations, each followed by two possible next turns, reply A and reply B. Go."
    Survey.objects.filter(pk=survey.pk).update(instructions=old)
    text = _text(Client().get(f"/s/{survey.token}/").content.decode())
    assert "two possible next turns, reply 1 and reply 2. Go." in text and "reply A" not in text


def test_rating_pages_are_unchanged_by_the_pair_side_names(researcher):
    survey = make_survey(researcher, n_contexts=6, assignments_per_hit=1)
    client = Client()
    text = _text(client.get(start_task(client, survey, "w1")).content.decode())
    assert "Reply 1:" in text and "Pair 1" not in text


# --- F11: the number of tasks one can do is never more than the survey has ----------------------


def test_start_and_task_pages_show_the_cap_as_the_survey_has_it(researcher):
    # 6 contexts, 3 per HIT: 2 HITs, while the cap per annotator is 10.
    survey = make_survey(researcher, n_contexts=6, max_hits_per_annotator=10, assignments_per_hit=1)
    assert survey.hits.count() == 2
    client = Client()
    start = _text(client.get(f"/s/{survey.token}/").content.decode())
    assert "You can do up to 2 tasks;" in start and "up to 10" not in start
    task = _text(client.get(start_task(client, survey, "w1")).content.decode())
    assert "Task 1 of at most 2 ·" in task


def test_a_cap_below_the_number_of_hits_is_shown_as_it_is(researcher):
    survey = make_survey(researcher, n_contexts=12, max_hits_per_annotator=3, assignments_per_hit=1)
    assert survey.hits.count() == 4
    client = Client()
    assert "You can do up to 3 tasks;" in _text(client.get(f"/s/{survey.token}/").content.decode())
    assert "Task 1 of at most 3 ·" in _text(client.get(start_task(client, survey, "w1")).content.decode())


def test_one_hit_reads_one_task(researcher):
    survey = make_survey(researcher, n_contexts=3, max_hits_per_annotator=10, assignments_per_hit=1)
    assert "You can do up to 1 task;" in _text(Client().get(f"/s/{survey.token}/").content.decode())


# --- F13: the link platform's entry page says what the task is; the code is shown here ----------


@pytest.fixture
def link_survey(researcher):
    survey = make_survey(researcher, n_contexts=6, name="on-connect", launch=False, assignments_per_hit=1)
    Survey.objects.filter(pk=survey.pk).update(provider=Survey.Provider.LINK)
    survey.refresh_from_db()
    platform_settings(survey, participant_param="workerId", completion_url=COMPLETE)
    return services.survey_launch(survey=survey)


COMPLETE = "https://connect.example.org/complete?code={code}"


def test_the_link_entry_page_shows_the_task_facts_the_start_page_shows(link_survey):
    entry = _text(Client().get(f"/l/{link_survey.token}/", {"workerId": "P1"}).content.decode())
    # 3 contexts of 4 systems' replies, and one check block of 4: 16 replies per task.
    assert "Each task: 16 replies to rate," in entry
    assert re.search(r"Each task: \d+ replies to rate, about \d+ minutes? \(an estimate\)\.", entry)
    assert "You can do up to 2 tasks;" in entry and "Finish shows your completion code" in entry


def test_finish_shows_the_completion_code_with_a_way_back_that_carries_it(link_survey):
    client = Client()
    started = client.post(f"/l/{link_survey.token}/", {"workerId": "P1"})
    page = client.get(started["Location"]).content.decode()
    done = client.post(started["Location"], _passing(page))
    assert done.status_code == 302, done.content[:300]
    code = LinkPlatform.objects.get(survey=link_survey).completion_code
    finish = client.get(f"/l/{link_survey.token}/finish/")
    html = finish.content.decode()
    assert finish.status_code == 200 and "Location" not in finish
    assert f'<strong id="completion-code">{code}</strong>' in html
    assert f'href="https://connect.example.org/complete?code={code}"' in html and "Return to your platform" in html
    assert "no-store" in finish["Cache-Control"]


def _passing(page):
    """Answers to every question of a rating page, instructed checks answered as they ask."""
    answers = {}
    for item_id in re.findall(r'data-item="(\d+)"', page):
        block = page[page.index(f'data-item="{item_id}"') :]
        block = block[: block.find('class="task-item', 10) if 'class="task-item' in block[10:] else len(block)]
        wanted = re.search(r"Please choose (\d) for", block)
        for name in set(re.findall(rf'name="(score-{item_id}-[\w-]+)"', block)):
            answers[name] = wanted.group(1) if wanted else "3"
    return answers


# --- F12: a task resumed elsewhere says where its unsent answers are -----------------------------

RESUME_RE = re.compile(r"Your resume code: <strong>([a-z0-9-]+)</strong>")


def test_a_task_continued_with_the_resume_code_says_the_unsent_answers_stayed_in_the_other_browser(researcher):
    survey = make_survey(researcher, n_contexts=6, assignments_per_hit=1)
    desktop = Client()
    task_url = start_task(desktop, survey, "me")
    first = desktop.get(task_url).content.decode()
    code = RESUME_RE.search(first).group(1)
    assert 'id="resumed-note"' not in first, "the browser that started it is told nothing"

    phone = Client()
    refused = _text(phone.get(task_url).content.decode())
    assert "Answers given there and not yet submitted stay in that browser." in refused
    resumed = phone.post(f"/s/{survey.token}/", {"action": "resume", "resume_code": code})
    start = phone.get(resumed["Location"]).content.decode()
    assert f'href="{task_url}?resumed=1">Continue your task</a>' in start
    page = phone.get(f"{task_url}?resumed=1").content.decode()
    note = re.search(r'<p id="resumed-note"[^>]*>(.*?)</p>', page)
    assert note and "not shown here" in note.group(1) and "in another browser or on another device" in note.group(1)
    assert "hidden" not in note.group(0), "shown without script too"
    # A plain visit of the start page (no resume code typed just now) leads to the task without the note.
    assert f'href="{task_url}">Continue your task</a>' in phone.get(f"/s/{survey.token}/").content.decode()
    assert 'id="resumed-note"' not in phone.get(task_url).content.decode()


# --- F08: a gold check written with the dataset's speakers shows each speaker once ---------------


def _named_dataset(researcher, name="walk-study", n=12):
    records = dataset_records(n)
    for record in records:
        record["context"] = [{"speaker": "A", "text": record["context"][0]}, record["context"][1]]
    return load_dataset_records(records=records, name=name, owner=researcher)


def _gold_block_turns(survey):
    """The turns (speaker, text) shown above each HIT's gold reply."""
    shown = []
    for hit in survey.hits.all():
        items = list(hit.items.order_by("position").select_related("context", "response", "attention_check"))
        for block in hit_blocks(survey=survey, items=items):
            if any(item["text"] == "Yes, fire is freezing cold." for item in block["items"]):
                shown.append([(turn["speaker"], turn["text"]) for turn in block["turns"]])
    return shown


@pytest.mark.parametrize("written", ["A: Is fire cold? | B: No, it's hot.", "a : Is fire cold? | b:No, it's hot."])
def test_gold_turns_written_with_the_datasets_speakers_show_each_speaker_once(researcher, written):
    dataset = _named_dataset(researcher)
    form = SurveyForm(
        data=survey_form_fields(
            dataset,
            name="walk-rate",
            provider="local",
            attention_checks_per_hit=1,
            gold_checks=f"{written} => Yes, fire is freezing cold. => 1,2",
        ),
        datasets=Dataset.objects.all(),
        owner=researcher,
    )
    assert form.is_valid(), form.errors
    data = form.cleaned_data
    survey = services.survey_create(
        dataset=dataset, name="walk-rate", owner=researcher, gold_checks=data["gold"], **form.settings()
    )
    shown = _gold_block_turns(survey)
    assert shown and all(turns == [("A", "Is fire cold?"), ("B", "No, it's hot.")] for turns in shown), shown
    client = Client()
    services.survey_launch(survey=survey)
    page = client.get(start_task(client, survey, "w1")).content.decode()
    assert "A: A:" not in _text(page) and "B: B:" not in _text(page)


def test_a_turn_that_names_no_speaker_of_the_dataset_is_left_as_written(researcher):
    dataset = _named_dataset(researcher)
    gold = [{"turns": ["Note: fire is hot", "B: really?"], "response_text": "Yes, fire is freezing cold.",
             "accepted_scores": [1]}]  # fmt: skip
    survey = services.survey_create(
        dataset=dataset, name="notes", owner=researcher, gold_checks=gold, attention_checks_per_hit=1
    )
    shown = _gold_block_turns(survey)
    # "Note" is not a speaker of the dataset: the first turn keeps its words and takes the dataset's A.
    assert shown and all(turns == [("A", "Note: fire is hot"), ("B", "really?")] for turns in shown), shown


def test_gold_turns_with_a_written_speaker_still_borrow_their_own_conversations_replies(researcher):
    dataset = _named_dataset(researcher)
    gold = [{"turns": ["A: hello number 5", "B: how are you 5?"], "response_text": "Yes, fire is freezing cold.",
             "accepted_scores": [1]}]  # fmt: skip
    survey = services.survey_create(
        dataset=dataset, name="own", owner=researcher, gold_checks=gold, attention_checks_per_hit=1
    )
    own = dataset.contexts.get(external_id="c005")
    for hit in survey.hits.all():
        fillers = hit.items.filter(kind=HITItem.Kind.GOLD_FILLER)
        if not hit.items.filter(context=own).exclude(kind=HITItem.Kind.GOLD_FILLER).exists():
            assert fillers.exists() and all(item.context_id == own.pk for item in fillers)


def test_the_gold_field_says_speakers_are_added():
    help_text = str(SurveyForm.base_fields["gold_checks"].help_text)
    assert "Speakers are added as the dataset names them" in help_text


# --- F09: few gold checks are warned about; a next task repeats no check block met before --------


def test_the_estimate_warns_when_an_annotator_would_meet_a_gold_check_twice():
    base = {"n_contexts": 6, "n_systems": 4, "contexts_per_hit": 3, "attention_checks_per_hit": 2}
    # 2 HITs, 2 checks per HIT of which 1 gold: 2 gold blocks for one annotator doing both.
    short = survey_estimate(**base, n_gold_checks=1, max_hits_per_annotator=10)["gold_short"]
    assert short.startswith("1 gold check for 2 gold blocks: an annotator doing 2 tasks meets 1 gold check in each")
    assert "Give at least 2 gold checks" in short
    assert survey_estimate(**base, n_gold_checks=2, max_hits_per_annotator=10)["gold_short"] == ""
    assert survey_estimate(**base, n_gold_checks=1, max_hits_per_annotator=1)["gold_short"] == ""
    assert survey_estimate(**base, n_gold_checks=0)["gold_short"] == "", "instructed checks only, as designed"
    three = {**base, "attention_checks_per_hit": 3, "n_contexts": 30}  # 2 of 3 gold, 10 HITs, at most 4 each
    assert survey_estimate(**three, n_gold_checks=7, max_hits_per_annotator=4)["gold_short"].startswith(
        "7 gold checks for 8 gold blocks"
    )
    assert survey_estimate(**base, task_type="pairwise", n_gold_checks=1)["gold_short"] == ""


def test_the_survey_form_shows_the_gold_warning_in_its_estimate_and_on_creation(researcher_client, researcher):
    dataset = _named_dataset(researcher, n=6)
    fields = survey_form_fields(
        dataset,
        name="walk-rate",
        provider="local",
        contexts_per_hit=3,
        attention_checks_per_hit=2,
        max_hits_per_annotator=10,
        gold_checks="A: Is fire cold? | B: No, it's hot. => Yes, fire is freezing cold. => 1,2",
    )
    estimate = researcher_client.post("/surveys/new/", {**fields, "estimate": "1"}).content.decode()
    note = re.search(r'<p class="status" role="note" id="estimate-gold-short">(.*?)</p>', estimate)
    assert note and note.group(1).startswith("1 gold check for 2 gold blocks"), estimate[-3000:]
    created = researcher_client.post("/surveys/new/", fields, follow=True).content.decode()
    assert "1 gold check for 2 gold blocks" in _text(created)
    enough = {**fields, "name": "enough", "max_hits_per_annotator": 1}
    assert "gold blocks" not in researcher_client.post("/surveys/new/", {**enough, "estimate": "1"}).content.decode()


GOLDS = [
    {"turns": [f"is fire cold {n}?"], "response_text": f"Yes, fire is freezing cold {n}.", "accepted_scores": [1, 2]}
    for n in (1, 2)
]


def _check_layout(hit):
    """What a HIT's check blocks show: its gold checks, the conversations its fillers are borrowed
    from, and the conversations of its real items (overlap ones aside)."""
    items = list(hit.items.all())
    golds = {item.attention_check_id for item in items if item.kind == HITItem.Kind.GOLD}
    borrowed = {item.context_id for item in items if item.kind in HITItem.FILLERS}
    real = {item.context_id for item in items if item.kind == HITItem.Kind.RESPONSE and not item.is_overlap}
    return golds, borrowed, real


def _repeats(first, other):
    """Whether `other` would show an annotator of `first` a gold check or a reply met there."""
    golds, borrowed, real = _check_layout(first)
    other_golds, other_borrowed, other_real = _check_layout(other)
    return bool(golds & other_golds or other_borrowed & (real | borrowed) or other_real & borrowed)


@pytest.mark.parametrize("repeat", ["the same gold check", "fillers rated in task 1"])
def test_the_next_task_repeats_no_check_block_when_another_task_is_free(researcher, repeat):
    survey = make_survey(
        researcher, n_contexts=30, gold_checks=GOLDS, attention_checks_per_hit=1, assignments_per_hit=1
    )
    hits = list(survey.hits.order_by("position"))
    assert len(hits) == 10
    first_gold, other_gold = sorted(survey.attention_checks.values_list("pk", flat=True))
    # The layout draws golds and fillers: set them so that the next HIT by position repeats one thing.
    for hit in hits:
        gold = first_gold if hit == hits[0] or (hit == hits[1] and repeat == "the same gold check") else other_gold
        hit.items.filter(kind__in=(HITItem.Kind.GOLD, HITItem.Kind.GOLD_FILLER)).update(attention_check_id=gold)
    if repeat == "fillers rated in task 1":
        rated = hits[0].items.filter(kind=HITItem.Kind.RESPONSE).first().context
        replies = list(rated.responses.values_list("pk", flat=True))
        for item, reply in zip(hits[1].items.filter(kind=HITItem.Kind.GOLD_FILLER), replies, strict=False):
            HITItem.objects.filter(pk=item.pk).update(context=rated, response_id=reply)
    assert _repeats(hits[0], hits[1])
    free = [hit for hit in hits[1:] if not _repeats(hits[0], hit)]
    assert free, "the test's layout leaves a task that repeats nothing"

    first = services.assignment_claim(survey=survey, worker_id="w1")
    assert first.hit == hits[0]
    services.assignment_submit(assignment=first, answers=good_answers(first))
    second = services.assignment_claim(survey=survey, worker_id="w1")
    assert second.hit in free and second.hit == free[0], "the first free task in order that repeats nothing"
    # Someone new still takes the first open HIT by position.
    assert services.assignment_claim(survey=survey, worker_id="w2").hit == hits[1]


def test_a_task_that_repeats_a_check_is_still_given_when_no_other_is_left(researcher):
    # 2 HITs and 1 gold check on both, as in the walk: the second task repeats it, but it is work.
    survey = make_survey(
        researcher, n_contexts=6, gold_checks=GOLDS[:1], attention_checks_per_hit=1, assignments_per_hit=1
    )
    hits = list(survey.hits.order_by("position"))
    first = services.assignment_claim(survey=survey, worker_id="w1")
    services.assignment_submit(assignment=first, answers=good_answers(first))
    assert _repeats(hits[0], hits[1])
    assert services.assignment_claim(survey=survey, worker_id="w1").hit == hits[1]


def test_the_prolific_entry_page_shows_the_task_facts_too(client, researcher, api):
    survey = make_prolific_survey(researcher, name="facts-on-prolific")
    publish(api, survey)
    page = _text(entry(client, survey, participant=pid(1), session_id=session(1), method="get").content.decode())
    hits = survey.hits.count()
    tasks = min(hits, survey.max_hits_per_annotator)
    assert re.search(r"Each task: \d+ repl(y|ies) to rate, about \d+ minutes? \(an estimate\)\.", page), page
    assert f"You can do up to {tasks} task" in page and f"(at most {tasks})" in page
