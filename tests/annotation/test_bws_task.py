"""Best-worst surveys (annotation/kinds/bws/): balanced tuples laid out per context, a gold tuple
per HIT, claimed and submitted through the same link as the other kinds, best != worst enforced,
missing answers named, simulated annotators, and the export."""

import collections
import csv
import io
import json
import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse

from annotation import services
from annotation.kinds.registry import kind_for
from annotation.models import Assignment, AttentionAnswer, BWSJudgement, HITItem, Response, Survey, System
from tests.annotation.bws_helpers import SIX_SYSTEMS, bws_answers, form_data, make_bws_survey
from tests.annotation.link_helpers import started_task
from tests.annotation.studies_helpers import survey_form_fields

pytestmark = pytest.mark.django_db


def _tuples(survey, kind=HITItem.Kind.BWS):
    return list(HITItem.objects.filter(hit__survey=survey, kind=kind))


def test_each_context_gets_balanced_tuples_of_four_and_each_hit_a_gold_tuple(researcher):
    survey = make_bws_survey(researcher, n_contexts=6, contexts_per_hit=3)
    tuples = _tuples(survey)
    per_context = collections.defaultdict(list)
    for item in tuples:
        per_context[item.context_id].append(item.tuple_responses)
    assert len(per_context) == 6
    for context_id, members in per_context.items():
        assert len(members) == 3, "6 replies shown twice each in tuples of 4: 3 tuples"
        assert all(len(m) == 4 and len(set(m)) == 4 for m in members)
        shown = collections.Counter(pk for m in members for pk in m)
        replies = set(Response.objects.filter(context_id=context_id).values_list("pk", flat=True))
        assert set(shown) == replies and max(shown.values()) - min(shown.values()) <= 1
    for hit in survey.hits.all():
        gold = hit.items.get(kind=HITItem.Kind.BWS_GOLD)
        assert gold.broken_text and gold.tuple_responses.count(None) == 1 and len(gold.tuple_responses) == 4
        real = [pk for pk in gold.tuple_responses if pk]
        assert set(Response.objects.filter(pk__in=real).values_list("context_id", flat=True)) == {gold.context_id}
        # the check is a block as large as a real one, under a conversation this HIT shows nowhere else
        items = list(hit.items.order_by("position"))
        block = [item for item in items if item.context_id == gold.context_id]
        assert len(block) == 3 and {item.kind for item in block} == {HITItem.Kind.BWS_GOLD, HITItem.Kind.BWS_FILLER}
        positions = [item.position for item in block]
        assert positions == list(range(positions[0], positions[0] + 3)), "one block, not split"
        assert not any(item.kind == HITItem.Kind.BWS for item in block)


def test_the_tuple_size_is_a_setting_and_too_small_a_tuple_is_refused(researcher):
    survey = make_bws_survey(researcher, n_contexts=2, tuple_size=3, name="threes")
    assert {len(item.tuple_responses) for item in _tuples(survey)} == {3}
    with pytest.raises(services.SurveyError, match="at least 3"):
        make_bws_survey(researcher, n_contexts=2, tuple_size=2, name="twos")


def _start(survey, worker="w1"):
    client = Client()
    started = client.post(f"/s/{survey.token}/", {"action": "start", "worker": worker})
    return client, started_task(started)


def test_an_annotator_picks_best_and_worst_through_the_link_blind_to_systems(researcher):
    survey = make_bws_survey(researcher, n_contexts=2, contexts_per_hit=2)
    client, url = _start(survey)
    page = client.get(url).content.decode()
    for name in ("hred", "tfidf", "seq2seq", "retrieval", "secret reference"):
        assert name not in page
    assignment = Assignment.objects.get(status="active")
    items = services.assignment_items(assignment=assignment)
    assert page.count('class="bws-set"') == len(items)
    assert page.count('name="score-') == len(items) * 2 * 4, "best and worst, four replies each"
    gold = next(item for item in items if item.kind == HITItem.Kind.BWS_GOLD)
    assert gold.broken_text in page
    answers = bws_answers(assignment, pick=lambda item: (2, 4))
    response = client.post(url, form_data(answers))
    assert response.status_code == 302
    stored = BWSJudgement.objects.filter(survey=survey)
    real = [item for item in items if item.kind == HITItem.Kind.BWS]
    assert stored.count() == len(real)
    for item in real:
        judgement = stored.get(item=item)
        assert judgement.responses == item.tuple_responses
        assert (judgement.best_id, judgement.worst_id) == (item.tuple_responses[1], item.tuple_responses[3])
        assert judgement.context_id == item.context_id and judgement.seconds == 5.0
    assert AttentionAnswer.objects.get(item=gold).passed
    assert Assignment.objects.get(pk=assignment.pk).flagged is False


def test_one_reply_as_both_best_and_worst_is_refused_and_nothing_is_stored(researcher):
    survey = make_bws_survey(researcher, n_contexts=2, contexts_per_hit=2)
    client, url = _start(survey)
    assignment = Assignment.objects.get(status="active")
    answers = bws_answers(assignment)
    first = next(pk for pk in answers if HITItem.objects.get(pk=pk).kind == HITItem.Kind.BWS)
    number = [item.pk for item in services.assignment_items(assignment=assignment)].index(first) + 1
    answers[first]["scores"] = {"best": "3", "worst": "3"}
    body = client.post(url, form_data(answers)).content.decode()
    assert f"Set {number}: the same reply cannot be both the best and the worst" in body
    assert not BWSJudgement.objects.exists() and Assignment.objects.get(pk=assignment.pk).status == "active"
    with pytest.raises(services.SubmissionRefused, match="not a reply of this set"):
        answers[first]["scores"] = {"best": "5", "worst": "1"}
        services.assignment_submit(assignment=assignment, answers=answers)


def test_missing_picks_are_named_as_sets_and_marked(researcher):
    survey = make_bws_survey(researcher, n_contexts=2, contexts_per_hit=2)
    client, url = _start(survey)
    assignment = Assignment.objects.get(status="active")
    answers = bws_answers(assignment)
    ids = list(answers)
    del answers[ids[0]]["scores"]["worst"]
    del answers[ids[2]]
    body = client.post(url, form_data(answers)).content.decode()
    assert "Please answer every item: sets 1 and 3 are still unanswered (marked below)." in body
    assert body.count('class="task-item missing"') == 2
    kept = re.search(rf'name="score-{ids[0]}-best" value="{answers[ids[0]]["scores"]["best"]}"[^>]*>', body)
    assert kept and " checked" in kept.group(0), "the pick given is shown again"
    assert not BWSJudgement.objects.exists()


def test_a_gold_tuple_fails_unless_the_broken_reply_is_picked_worst(researcher):
    survey = make_bws_survey(researcher, n_contexts=2, contexts_per_hit=2)
    _start(survey)
    assignment = Assignment.objects.get(status="active")
    answers = bws_answers(assignment)
    gold = HITItem.objects.get(hit=assignment.hit, kind=HITItem.Kind.BWS_GOLD)
    broken = gold.tuple_responses.index(None) + 1
    other = 1 if broken != 1 else 2
    answers[gold.pk]["scores"] = {"best": str(broken), "worst": str(other)}
    result = services.assignment_submit(assignment=assignment, answers=answers)
    assert result.checks_failed == 1 and result.flagged
    check = AttentionAnswer.objects.get(item=gold)
    assert not check.passed and check.score == other


def test_simulated_annotators_work_a_bws_survey_and_good_systems_win(researcher):
    survey = make_bws_survey(researcher, n_contexts=6, contexts_per_hit=3, assignments_per_hit=3, name="sim")
    quality = dict(zip(SIX_SYSTEMS, (0.95, 0.8, 0.6, 0.4, 0.2, 0.05), strict=True))
    for response in Response.objects.filter(context__dataset=survey.dataset).select_related("system"):
        response.meta = {"demo_quality": quality[response.system.name]}
        response.save(update_fields=["meta"])
    out = io.StringIO()
    call_command("simulate_ratings", survey.name, "--annotators", "4", stdout=out)
    summary = json.loads(out.getvalue())
    judgements = BWSJudgement.objects.filter(survey=survey).select_related("best__system", "worst__system")
    assert judgements.count() > 0 and summary
    best = collections.Counter(j.best.system.name for j in judgements)
    worst = collections.Counter(j.worst.system.name for j in judgements)
    assert best.most_common(1)[0][0] == "hred" and worst.most_common(1)[0][0] == "retrieval"
    assert not AttentionAnswer.objects.filter(assignment__hit__survey=survey, passed=False).exists()


def _judged(researcher, pick=lambda item: (1, 3)):
    survey = make_bws_survey(researcher, n_contexts=2, contexts_per_hit=2, name="exp")
    _start(survey, "secret-worker-7")
    assignment = Assignment.objects.get(status="active")
    services.assignment_submit(assignment=assignment, answers=bws_answers(assignment, pick=pick))
    return survey


def _hred_best(item):
    """hred's reply picked best where the tuple shows it (else the first), the last other one worst."""
    names = [Response.objects.get(pk=pk).system.name for pk in item.tuple_responses]
    best = names.index("hred") + 1 if "hred" in names else 1
    return best, 4 if best != 4 else 3


def test_export_bws_writes_one_pseudonymised_line_per_judgement(researcher):
    survey = _judged(researcher)
    out = io.StringIO()
    call_command("export_bws", "--survey", survey.name, stdout=out)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    judgements = BWSJudgement.objects.filter(survey=survey).order_by("context__position", "pk")
    assert len(lines) == judgements.count() > 0
    for line, judgement in zip(lines, judgements, strict=True):
        systems = [Response.objects.get(pk=pk).system.name for pk in judgement.responses]
        assert line["systems"] == systems and line["best"] == systems[0] and line["worst"] == systems[2]
        assert line["context_id"] == judgement.context.external_id and line["worker"] == "A1"
    assert "secret-worker-7" not in out.getvalue()


def test_export_bws_csv_neutralises_formulas(researcher):
    survey = _judged(researcher, pick=_hred_best)
    System.objects.filter(dataset=survey.dataset, name="hred").update(name="=HYPERLINK(1)")
    out = io.StringIO()
    call_command("export_bws", "--survey", survey.name, "--format", "csv", stdout=out)
    text = out.getvalue()
    assert text.splitlines()[0] == "worker,context_id,systems,best,worst,seconds,survey,context_ids"
    cells = [cell for row in csv.reader(io.StringIO(text)) for cell in row]
    assert any("HYPERLINK" in cell for cell in cells)
    assert not [cell for cell in cells if cell[:1] in ("=", "+", "-", "@")], "no cell a spreadsheet would run"
    assert "'=HYPERLINK(1)" in cells, "picked best: its cell neutralised"


def test_export_bws_refuses_another_kind_of_survey(researcher):
    survey = make_bws_survey(researcher, n_contexts=2, task_type="rate", name="ratings")
    with pytest.raises(CommandError, match="not a best-worst survey"):
        call_command("export_bws", "--survey", survey.name, stdout=io.StringIO())


def test_create_survey_makes_a_bws_survey_of_the_tuple_size_asked(researcher):
    dataset = make_bws_survey(researcher, n_contexts=3, launch=False, name="base").dataset
    call_command(
        "create_survey", "--dataset", dataset.name, "--name", "cli-bws", "--task-type", "bws", "--tuple-size", "5",
        stdout=io.StringIO(), stderr=io.StringIO(),
    )  # fmt: skip
    survey = Survey.objects.get(name="cli-bws")
    assert survey.task_type == "bws" and survey.tuple_size == 5 and survey.status == Survey.Status.LIVE
    assert {len(item.tuple_responses) for item in _tuples(survey)} == {5}
    assert kind_for(survey).report_section == "bws"


def test_the_researchers_pages_of_a_judged_bws_survey(researcher, researcher_client):
    survey = _judged(researcher)
    annotator = BWSJudgement.objects.filter(survey=survey).first().annotator
    pages = {
        "detail": reverse("annotation:survey_detail", args=[survey.pk]),
        "preview": reverse("annotation:survey_preview", args=[survey.pk]),
        "quality": reverse("annotation:quality_survey", args=[survey.pk]),
        "annotator": reverse("annotation:survey_annotator", args=[survey.pk, annotator.pk]),
        "export": reverse("annotation:survey_export", args=[survey.pk]),
    }
    bodies = {}
    for name, url in pages.items():
        response = researcher_client.get(url)
        assert response.status_code == 200, name
        bodies[name] = b"".join(response) if response.streaming else response.content
    assert bodies["preview"].decode().count('class="bws-set"') >= 1
    lines = [json.loads(line) for line in bodies["export"].decode().splitlines()]
    assert len(lines) == BWSJudgement.objects.filter(survey=survey).count()
    assert {"worker", "context_id", "systems", "best", "worst"} <= set(lines[0])


def test_the_survey_form_makes_a_bws_survey_with_its_set_size(researcher, researcher_client):
    dataset = make_bws_survey(researcher, n_contexts=3, launch=False, name="form-base").dataset
    assert "Replies per set" in researcher_client.get(reverse("annotation:survey_new")).content.decode()
    form = survey_form_fields(dataset, name="form-bws", provider="local", task_type="bws", tuple_size=5)
    form.pop("question")
    response = researcher_client.post(reverse("annotation:survey_new"), form)
    assert response.status_code == 302, response.content.decode()[:2000]
    survey = Survey.objects.get(name="form-bws")
    assert survey.task_type == "bws" and survey.tuple_size == 5
    assert survey.aspects.get().question == "Which reply is the best next turn?"


def test_the_estimate_counts_the_sets_a_hit_shows(researcher):
    survey = make_bws_survey(researcher, n_contexts=6, contexts_per_hit=3, name="est")
    estimate = services.survey_estimate_for(survey=survey)
    hit = survey.hits.first()
    assert estimate["items_per_hit"] == hit.items.count() == (3 + 1) * 3
    assert estimate["ratings"] == HITItem.objects.filter(hit__survey=survey, kind=HITItem.Kind.BWS).count() * 2
    assert estimate["answers"] == "Judgements"


def test_the_survey_form_refuses_extra_aspects_for_a_bws_survey(researcher, researcher_client):
    dataset = make_bws_survey(researcher, n_contexts=3, launch=False, name="form-base2").dataset
    form = survey_form_fields(dataset, name="form-bws2", provider="local", task_type="bws", aspects="fluency")
    body = researcher_client.post(reverse("annotation:survey_new"), form).content.decode()
    assert "it takes no extra aspects" in body and not Survey.objects.filter(name="form-bws2").exists()
