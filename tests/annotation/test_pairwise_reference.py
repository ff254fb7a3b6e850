"""A context's reference as a side of a pairwise comparison (issue 21: "a system and a reference
where the researcher asks for that"): the dataset's reference pseudo-system, kept out of everything
but pairwise studies, planned with `reference_pairs` = also / only, shown as just another reply."""

import collections
import io
import json
import re

import pytest
from django.core.management import call_command
from django.test import Client

from annotation import services
from annotation.importing import DataImportError
from annotation.kinds.pairwise.exporting import pairwise_export
from annotation.kinds.pairwise.imports import pairwise_import
from annotation.kinds.pairwise.references import reference_system_ensure
from annotation.kinds.pairwise.selectors import judged_pairs
from annotation.models import REFERENCE_SYSTEM_NAME, HITItem, PairwiseJudgement, Response, Survey, System
from tests.annotation.link_helpers import started_task
from tests.annotation.pairwise_helpers import make_pairwise_survey, pairwise_answers
from tests.annotation.studies_helpers import SYSTEMS, dataset_records, make_survey
from tests.factories import load_dataset_records

pytestmark = pytest.mark.django_db


def _records(n_contexts, *, without_reference=()):
    """Dataset records whose references say nothing about being references (the page test looks for the word)."""
    records = dataset_records(n_contexts)
    for i, record in enumerate(records):
        record["references"] = [] if i in without_reference else [f"gold answer {i}", f"second gold {i}"]
    return records


def _pairs(survey):
    return list(
        HITItem.objects.filter(hit__survey=survey, kind=HITItem.Kind.PAIR).select_related(
            "response__system", "response_b__system"
        )
    )


def _sides(item):
    return item.response.system.name, item.response_b.system.name


def test_the_reference_system_holds_each_contexts_first_reference_and_a_second_call_creates_nothing(researcher):
    dataset = load_dataset_records(records=_records(4, without_reference={2}), name="refs", owner=researcher)
    system = reference_system_ensure(dataset=dataset)
    assert (system.name, system.is_reference) == (REFERENCE_SYSTEM_NAME, True)
    responses = Response.with_references.filter(system=system).select_related("context")
    assert sorted((r.context.external_id, r.text) for r in responses) == [
        ("c000", "gold answer 0"),
        ("c001", "gold answer 1"),
        ("c003", "gold answer 3"),
    ], "one response per context with a reference (the first), none for c002"
    first = dataset.contexts.get(external_id="c000").references.get(position=0)
    assert responses.get(context__external_id="c000").meta == {"reference_id": first.pk}
    counts = (System.with_references.count(), Response.with_references.count())
    assert reference_system_ensure(dataset=dataset).pk == system.pk
    assert (System.with_references.count(), Response.with_references.count()) == counts


def test_the_default_managers_leave_the_reference_system_out_and_foreign_keys_still_reach_it(researcher):
    dataset = load_dataset_records(records=_records(3), name="refs", owner=researcher)
    system = reference_system_ensure(dataset=dataset)
    assert sorted(dataset.systems.values_list("name", flat=True)) == sorted(SYSTEMS)
    assert not System.objects.filter(pk=system.pk).exists()
    assert Response.objects.filter(context__dataset=dataset).count() == 3 * len(SYSTEMS)
    context = dataset.contexts.get(external_id="c000")
    assert REFERENCE_SYSTEM_NAME not in {r.system.name for r in context.responses.all()}
    reference_response = Response.with_references.get(system=system, context=context)
    judgement_like = HITItem(response_id=reference_response.pk)
    assert judgement_like.response.system.name == REFERENCE_SYSTEM_NAME, "forward access uses the base manager"


def test_a_rating_survey_on_a_dataset_with_a_reference_system_rates_only_real_systems(researcher):
    survey = make_pairwise_survey(researcher, n_contexts=6, name="ab", reference_pairs="also")
    rating = services.survey_create(dataset=survey.dataset, name="rate", owner=researcher, contexts_per_hit=3)
    rated = HITItem.objects.filter(hit__survey=rating, kind=HITItem.Kind.RESPONSE).select_related("response__system")
    assert rated.count() == 6 * len(SYSTEMS)
    assert {item.response.system.name for item in rated} == set(SYSTEMS)


def test_also_adds_the_reference_as_one_more_side_with_sides_balanced(researcher):
    survey = make_pairwise_survey(researcher, n_contexts=12, reference_pairs="also")
    pairs = _pairs(survey)
    per_context = collections.Counter(item.context_id for item in pairs)
    assert set(per_context.values()) == {10}, "four systems and the reference: 10 pairs per context"
    against_reference = collections.Counter(
        next(name for name in _sides(item) if name != REFERENCE_SYSTEM_NAME)
        for item in pairs
        if REFERENCE_SYSTEM_NAME in _sides(item)
    )
    assert against_reference == dict.fromkeys(SYSTEMS, 12)
    left = collections.Counter(_sides(item)[0] for item in pairs)
    shown = left + collections.Counter(_sides(item)[1] for item in pairs)
    for name, count in shown.items():
        assert abs(left[name] - count / 2) <= 1, f"{name} as often left as right"


@pytest.mark.parametrize("budget", [0, 2])
def test_only_compares_every_system_with_the_reference_equally_often_and_balances_sides(researcher, budget):
    survey = make_pairwise_survey(researcher, n_contexts=12, reference_pairs="only", pair_budget=budget)
    pairs = _pairs(survey)
    assert all(REFERENCE_SYSTEM_NAME in _sides(item) for item in pairs), "no system against another"
    opponents = collections.Counter(next(n for n in _sides(item) if n != REFERENCE_SYSTEM_NAME) for item in pairs)
    expected = 12 if budget == 0 else 12 * budget // len(SYSTEMS)
    assert opponents == dict.fromkeys(SYSTEMS, expected)
    left = collections.Counter(_sides(item)[0] for item in pairs)
    for name, count in opponents.items():
        assert abs(left[name] - count / 2) <= 1, f"{name} as often left as right"
    assert abs(left[REFERENCE_SYSTEM_NAME] - len(pairs) / 2) <= 1


def test_contexts_without_a_reference_are_compared_without_it(researcher):
    dataset = load_dataset_records(records=_records(4, without_reference={1}), name="partial", owner=researcher)
    survey = services.survey_create(
        dataset=dataset, name="ab", owner=researcher, task_type="pairwise", reference_pairs="only", contexts_per_hit=2
    )
    planned = {item.context.external_id for item in HITItem.objects.filter(hit__survey=survey, kind="pair")}
    assert planned == {"c000", "c002", "c003"}


def test_an_annotator_sees_the_reference_as_just_another_reply_and_the_answers_are_stored(researcher):
    dataset = load_dataset_records(records=_records(3), name="shown", owner=researcher)
    survey = services.survey_create(
        dataset=dataset, name="ab", owner=researcher, task_type="pairwise", reference_pairs="only", contexts_per_hit=3
    )
    survey = services.survey_launch(survey=survey)
    client = Client()
    started = client.post(f"/s/{survey.token}/", {"action": "start", "worker": "w1"})
    page = client.get(started_task(started)).content.decode()
    assert "gold answer 0" in page, "the reference's text is shown as a reply"
    assert "second gold" not in page, "only the first reference is a side"
    words = set(re.findall(r"[\w()]+", page.lower().replace("gold answer", "")))
    for label in ("reference", REFERENCE_SYSTEM_NAME, "gold", *SYSTEMS):
        assert label not in words, f"{label!r} revealed to the annotator"
    assignment = survey.hits.get().assignments.get(status="active")
    result = services.assignment_submit(assignment=assignment, answers=pairwise_answers(assignment))
    assert not result.flagged
    judgements = PairwiseJudgement.objects.filter(survey=survey).select_related(
        "response_a__system", "response_b__system"
    )
    assert judgements.count() == 3 * len(SYSTEMS)
    assert all(REFERENCE_SYSTEM_NAME in (j.response_a.system.name, j.response_b.system.name) for j in judgements)
    rows = judged_pairs(dataset=dataset)
    assert len(rows) == 3 * len(SYSTEMS)
    assert {r["system_a"] for r in rows} | {r["system_b"] for r in rows} == {REFERENCE_SYSTEM_NAME, *SYSTEMS}
    reference_rows = [r for r in rows if r["system_a"] == REFERENCE_SYSTEM_NAME]
    assert reference_rows and all(r["response_a"].startswith("gold answer") for r in reference_rows)


def test_export_names_the_reference_and_importing_the_export_recreates_it_on_demand(researcher):
    survey = make_pairwise_survey(researcher, n_contexts=3, contexts_per_hit=3, reference_pairs="also")
    assignment = services.assignment_claim(survey=survey, worker_id="w1")
    services.assignment_submit(assignment=assignment, answers=pairwise_answers(assignment))
    out = io.StringIO()
    count = pairwise_export(dataset=survey.dataset, stream=out, survey=survey)
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    assert count == 30 and sum(REFERENCE_SYSTEM_NAME in (r["system_a"], r["system_b"]) for r in records) == 12
    fresh = load_dataset_records(records=dataset_records(3), name="fresh", owner=researcher)
    assert not System.with_references.filter(dataset=fresh, is_reference=True).exists()
    imported = pairwise_import(file=out.getvalue().encode(), dataset=fresh, fmt="jsonl", survey_name="again")
    assert imported.reference_pairs == Survey.ReferencePairs.ALSO
    again = io.StringIO()
    pairwise_export(dataset=fresh, stream=again, survey=imported)
    key = lambda r: (r["context_id"], r["system_a"], r["system_b"], r["winner"])  # noqa: E731
    assert sorted(map(key, (json.loads(x) for x in again.getvalue().splitlines()))) == sorted(map(key, records))
    assert sorted(imported.systems.values_list("name", flat=True)) == sorted(SYSTEMS)


def test_importing_a_reference_side_for_a_context_without_a_reference_names_the_line(researcher):
    dataset = load_dataset_records(records=_records(2, without_reference={1}), name="partial", owner=researcher)
    lines = [
        {"context_id": "c000", "system_a": "hred", "system_b": REFERENCE_SYSTEM_NAME, "worker": "w", "winner": "a"},
        {"context_id": "c001", "system_a": REFERENCE_SYSTEM_NAME, "system_b": "hred", "worker": "w", "winner": "b"},
    ]
    with pytest.raises(DataImportError) as error:
        pairwise_import(file="".join(json.dumps(x) + "\n" for x in lines).encode(), dataset=dataset, fmt="jsonl")
    assert "line 2" in str(error.value) and "context 'c001' has no reference to compare with" in str(error.value)
    assert not PairwiseJudgement.objects.exists() and not System.with_references.filter(is_reference=True).exists()


def test_a_dataset_import_refuses_a_system_named_like_the_reference(researcher):
    records = dataset_records(2)
    records[1]["responses"][0]["system"] = REFERENCE_SYSTEM_NAME
    with pytest.raises(DataImportError) as error:
        load_dataset_records(records=records, name="bad", owner=researcher)
    message = str(error.value)
    assert "line 2" in message and "responses[0].system" in message and "reserved" in message


def test_the_survey_form_offers_the_reference_and_refuses_it_where_it_cannot_apply(researcher, researcher_client):
    with_refs = load_dataset_records(records=_records(6), name="with-refs", owner=researcher)
    without = load_dataset_records(records=_records(6, without_reference=range(6)), name="no-refs", owner=researcher)
    base = {
        "name": "ab", "task_type": "pairwise", "instructions": "Compare.", "contexts_per_hit": 3,
        "assignments_per_hit": 2, "attention_checks_per_hit": 1, "overlap_contexts": 0, "max_hits_per_annotator": 5,
        "assignment_minutes": 30, "reward_cents": 10, "attention_policy": "flag", "allow_tie": "on",
    }  # fmt: skip
    page = researcher_client.get(f"/surveys/new/?dataset={with_refs.pk}").content.decode()
    assert 'name="reference_pairs"' in page and "Only: each chosen system against the reference" in page
    refused = researcher_client.post("/surveys/new/", {**base, "dataset": without.pk, "reference_pairs": "also"})
    assert refused.status_code == 200 and "has no references to compare with" in refused.content.decode()
    rating = researcher_client.post(
        "/surveys/new/", {**base, "dataset": with_refs.pk, "task_type": "rate", "reference_pairs": "only"}
    )
    assert "for pairwise (A/B) surveys only" in rating.content.decode()
    assert not Survey.objects.exists() and not System.with_references.filter(is_reference=True).exists()
    made = researcher_client.post(
        "/surveys/new/", {**base, "dataset": with_refs.pk, "reference_pairs": "only", "systems": ["hred", "human"]}
    )
    assert made.status_code == 302, made.content.decode()[:2000]
    survey = Survey.objects.get(name="ab")
    assert survey.reference_pairs == "only"
    assert HITItem.objects.filter(hit__survey=survey, kind="pair").count() == 6 * 2
    detail = researcher_client.get(f"/surveys/{survey.pk}/").content.decode()
    assert "Only: each chosen system against the reference" in detail


def test_the_estimate_counts_the_reference_as_a_side():
    also = services.survey_estimate(n_contexts=10, n_systems=4, task_type="pairwise", reference_pairs="also")
    only = services.survey_estimate(n_contexts=10, n_systems=4, task_type="pairwise", reference_pairs="only")
    plain = services.survey_estimate(n_contexts=10, n_systems=4, task_type="pairwise")
    assert (plain["ratings"], also["ratings"], only["ratings"]) == (10 * 6 * 3, 10 * 10 * 3, 10 * 4 * 3)


def test_a_write_survey_may_not_add_replies_to_the_reference_name(researcher):
    dataset = load_dataset_records(records=_records(2), name="w", owner=researcher)
    with pytest.raises(services.SurveyError, match="reserved"):
        services.survey_create(
            dataset=dataset, name="w", owner=researcher, task_type="write", write_system_name=REFERENCE_SYSTEM_NAME
        )


def test_the_create_survey_command_takes_reference_pairs(researcher):
    make_survey(researcher, n_contexts=3, name="seed", launch=False)
    call_command(
        "create_survey", dataset="ds-seed", name="cmd", task_type="pairwise", reference_pairs="only", draft=True,
        stdout=io.StringIO(), stderr=io.StringIO(),
    )  # fmt: skip
    survey = Survey.objects.get(name="cmd")
    assert survey.reference_pairs == "only" and HITItem.objects.filter(hit__survey=survey, kind="pair").count() == 12


def test_deleting_the_dataset_deletes_its_reference_system_and_the_judgements_against_it(researcher):
    survey = make_pairwise_survey(researcher, n_contexts=3, contexts_per_hit=3, reference_pairs="only")
    assignment = services.assignment_claim(survey=survey, worker_id="w1")
    services.assignment_submit(assignment=assignment, answers=pairwise_answers(assignment))
    assert PairwiseJudgement.objects.count() == 3 * len(SYSTEMS)
    survey.dataset.delete()
    assert not System.with_references.exists() and not Response.with_references.exists()
    assert not PairwiseJudgement.objects.exists()
