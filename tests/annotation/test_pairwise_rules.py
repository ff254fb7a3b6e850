"""The pairwise survey's own exclusion rules (position bias, swapped-repeat consistency) and its
agreement over every question it asks: judged like the other rules, shown with their reasons on
the quality page, honoured by overrides and by the what-if audit."""

import itertools

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotation import services
from annotation.models import Annotator, HITItem, Survey
from annotation.quality import rules
from annotation.quality.recompute import quality_recompute
from annotation.quality.services import exclusion_override
from annotation.quality.whatif import excluded_under, settings_of, stored_evidence
from tests.annotation.pairwise_helpers import make_pairwise_survey, pairwise_answers
from tests.annotation.studies_helpers import dataset_records
from tests.factories import load_dataset_records


def _better(item):
    # Careful annotators agree on substance: a fixed one of the two responses wins, whatever side.
    first, second = sorted((item.response_id, item.response_b_id))
    winner = first if (first + second) % 2 else second
    return "a" if item.response_id == winner else "b"


def _submit(survey, worker, answers_of):
    assignment = services.assignment_claim(survey=survey, worker_id=worker)
    services.assignment_submit(assignment=assignment, answers=answers_of(assignment))


def _always_left_and_careless_on_repeats(assignment):
    """Every pair (and its swapped repeat) answered "left": gold pairs still passed."""
    answers = pairwise_answers(assignment, choose=lambda item: "a")
    for item in services.assignment_items(assignment=assignment):
        if item.kind == HITItem.Kind.PAIR_REPEAT:
            # every question "a", where mirrored would be "b": inconsistent
            answers[item.pk]["scores"] = dict.fromkeys(answers[item.pk]["scores"], "a")
    return answers


def _reasons(report, worker):
    entry = next(entry for entry in report["annotators"] if entry["worker"] == worker)
    return entry, {reason["rule"]: reason for reason in entry["reasons"]}


# --- the pure rules ---------------------------------------------------------------------------


def test_the_position_rule_needs_its_minimum_of_decisive_choices_and_a_share_beyond_the_bound():
    lefty = rules.AnnotatorEvidence(worker="w", left_choices=17, decisive=20)
    assert rules.position_finding(lefty, 0.3, 20)["detail"] == (
        "chose the left reply in 17 of 20 decisive choices (85%), further than 0.3 from one half"
    )
    assert rules.position_finding(lefty, 0.3, 21) is None  # too few choices to judge
    assert rules.position_finding(lefty, 0.35, 20) is None  # 0.85 is 0.35 from one half: not further
    assert rules.position_finding(lefty, None, 20) is None  # rule off
    righty = rules.AnnotatorEvidence(worker="w", left_choices=2, decisive=20)
    assert rules.position_finding(righty, 0.3, 20)["value"] == pytest.approx(0.1)
    assert rules.position_finding(rules.AnnotatorEvidence(worker="imported"), 0.0, 0) is None


def test_the_consistency_rule_needs_its_minimum_of_repeats_and_a_share_below_the_bound():
    shaky = rules.AnnotatorEvidence(worker="w", repeats_consistent=1, repeats_total=3)
    outcome = rules.evaluate(shaky, kappa_threshold=None, min_repeat_consistency=0.5, min_repeats=3)
    assert outcome.excluded and outcome.reasons[0]["rule"] == "consistency"
    assert outcome.reasons[0]["detail"] == "answered 1 of 3 swapped repeats consistently (33%), below 0.5"
    assert not rules.evaluate(shaky, kappa_threshold=None, min_repeat_consistency=0.5, min_repeats=4).excluded
    assert not rules.evaluate(shaky, kappa_threshold=None, min_repeat_consistency=1 / 3, min_repeats=3).excluded
    assert not rules.evaluate(shaky, kappa_threshold=None).excluded  # both pairwise rules off by default


# --- a survey ---------------------------------------------------------------------------------


@pytest.fixture
def study(researcher):
    survey = make_pairwise_survey(
        researcher, n_contexts=3, contexts_per_hit=3, assignments_per_hit=4, kappa_threshold=-1.0,
        max_position_bias=0.3, min_position_judgements=10, min_repeat_consistency=1.0, min_repeats=1,
        attention_policy="exclude",
    )  # fmt: skip
    # The careful annotators pick left and right in turn. With `_better` (a fixed reply wins,
    # whatever side it is on) their share of left picks followed the HIT's random layout, and now
    # and then passed the 0.3 bound: a careful annotator excluded for position bias (seen in CI).
    # Kappa plays no part here (threshold -1), so they need not agree on substance.
    for worker in ("w1", "w2", "w3"):
        _submit(survey, worker, lambda assignment: pairwise_answers(assignment, choose=_in_turn()))
    _submit(survey, "lefty", _always_left_and_careless_on_repeats)
    return survey


def _in_turn():
    sides = itertools.cycle("ab")
    return lambda item: next(sides)


@pytest.mark.django_db
def test_an_annotator_who_always_picks_left_is_excluded_by_position_and_consistency_with_the_reasons(study):
    report = quality_recompute(survey=study).data
    lefty, reasons = _reasons(report, "lefty")
    assert lefty["excluded"] and set(reasons) == {"position", "consistency"}
    assert lefty["position"] == {"left": 18, "decisive": 18} and lefty["repeats"] == {"consistent": 0, "total": 1}
    assert reasons["position"]["detail"].startswith("chose the left reply in 18 of 18 decisive choices (100%)")
    # The swapped repeat is not an attention check: the exclude policy does not act on it.
    assert lefty["attention"] == {"total": 1, "failed": 0}
    careful, _ = _reasons(report, "w1")
    assert not careful["excluded"] and careful["repeats"] == {"consistent": 1, "total": 1}
    assert report["settings"]["max_position_bias"] == 0.3 and report["n_excluded"] == 1


@pytest.mark.django_db
def test_the_pairwise_rules_are_off_unless_the_survey_sets_them(researcher):
    survey = make_pairwise_survey(researcher, n_contexts=3, contexts_per_hit=3, kappa_threshold=-1.0)
    assert survey.max_position_bias is None and survey.min_repeat_consistency is None
    _submit(survey, "lefty", _always_left_and_careless_on_repeats)
    report = quality_recompute(survey=survey).data
    assert report["n_excluded"] == 0 and report["annotators"][0]["position"]["decisive"] == 18


@pytest.mark.django_db
def test_a_bad_bound_is_refused_with_the_field_named(researcher):
    with pytest.raises(services.SurveyError, match=r"max_position_bias: .*less than or equal to 0.5"):
        make_pairwise_survey(researcher, n_contexts=3, max_position_bias=0.7)


@pytest.mark.django_db
def test_an_override_accepts_the_biased_annotator_and_the_audit_honours_it_and_the_rule_settings(study, researcher):
    report = quality_recompute(survey=study).data
    lefty = Annotator.objects.get(worker_id="lefty").pk
    own = settings_of(study)
    assert excluded_under(stored_evidence(report), own) == {lefty}
    assert excluded_under(stored_evidence(report), own.varied(min_repeat_consistency=None)) == {lefty}
    off = own.varied(max_position_bias=None, min_repeat_consistency=None)
    assert excluded_under(stored_evidence(report), off) == set()
    assert excluded_under(stored_evidence(report), own.varied(max_position_bias=None, min_repeats=2)) == set()
    exclusion_override(
        survey=study, annotator=Annotator.objects.get(pk=lefty), excluded=False, note="left was better", user=researcher
    )
    report = quality_recompute(survey=study).data
    entry, _ = _reasons(report, "lefty")
    assert not entry["excluded"] and entry["auto_excluded"] and entry["source"] == "manual"
    assert excluded_under(stored_evidence(report), own) == set()


@pytest.mark.django_db
def test_the_quality_page_gives_the_reason_for_each_pairwise_exclusion(study, researcher_client):
    quality_recompute(survey=study)
    html = researcher_client.get(reverse("annotation:quality_survey", args=[study.pk])).content.decode()
    excluded = html.split('id="excluded"', 1)[1].split("</table>", 1)[0]
    assert "lefty" in excluded and "position, consistency" in excluded
    assert "chose the left reply in 18 of 18 decisive choices (100%)" in excluded
    assert "answered 0 of 1 swapped repeat consistently (0%), below 1" in excluded
    rules_line = html.split('id="rules"', 1)[1].split("</p>", 1)[0]
    assert "further than 0.3 from 0.5 over at least 10 decisive choices" in rules_line
    lefty = Annotator.objects.get(worker_id="lefty").pk
    page = researcher_client.get(reverse("annotation:quality_annotator", args=[study.pk, lefty])).content.decode()
    assert "Left reply chosen<strong>18 / 18</strong>" in page and "Swapped repeats consistent<strong>0 / 1" in page


# --- agreement over every question ------------------------------------------------------------


@pytest.fixture
def two_questions(researcher):
    survey = make_pairwise_survey(
        researcher, n_contexts=3, contexts_per_hit=3, assignments_per_hit=4, aspects=["engaging"],
        kappa_threshold=0.2, min_seconds_per_item=0,
    )  # fmt: skip
    for worker in ("w1", "w2", "w3"):
        _submit(survey, worker, lambda assignment: pairwise_answers(assignment, choose=_better))

    def agrees_on_overall_only(assignment):
        answers = pairwise_answers(assignment, choose=_better)
        for answer in answers.values():
            if "engaging" in answer["scores"]:
                answer["scores"]["engaging"] = {"a": "b", "b": "a"}[answer["scores"]["engaging"]]
        return answers

    _submit(survey, "half", agrees_on_overall_only)
    return survey


@pytest.mark.django_db
def test_the_kappa_rule_judges_every_question_so_agreeing_on_overall_alone_is_not_enough(two_questions):
    report = quality_recompute(survey=two_questions).data
    half, reasons = _reasons(report, "half")
    assert set(reasons) == {"kappa"} and half["kappa_judged"] < 0.2
    careful, _ = _reasons(report, "w1")
    assert not careful["excluded"] and careful["kappa_judged"] == pytest.approx(1.0)
    assert report["aspects"] == ["overall", "engaging"] and report["n_responses"] == 2 * 18
    per_aspect = {row["aspect"]: row for row in report["pairwise"]["aspects"]}
    assert list(per_aspect) == ["overall", "engaging"]
    assert per_aspect["engaging"]["question"] == "Engaging: which reply is better?"  # not a rating question
    assert per_aspect["overall"]["median_kappa"] == pytest.approx(1.0) and per_aspect["overall"]["n_items"] == 18
    assert per_aspect["engaging"]["median_kappa"] < 0.5 and per_aspect["engaging"]["n_judgements"] == 4 * 18


@pytest.mark.django_db
def test_the_quality_page_shows_agreement_per_question(two_questions, researcher_client):
    quality_recompute(survey=two_questions)
    html = researcher_client.get(reverse("annotation:quality_survey", args=[two_questions.pk])).content.decode()
    table = html.split('id="pairwise-aspects"', 1)[1].split("</table>", 1)[0]
    assert table.index(">overall<") < table.index(">engaging<") and "Fleiss" in table
    assert "on every question it asks (overall, engaging)" in html


@pytest.mark.django_db
def test_create_survey_sets_the_pairwise_rules_and_refuses_a_bound_out_of_range(researcher):
    load_dataset_records(records=dataset_records(3, ["s1", "s2", "s3"]), name="ab-data", owner=researcher)
    common = ["create_survey", "--dataset", "ab-data", "--task-type", "pairwise", "--draft"]
    call_command(*common, "--name", "ab", "--max-position-bias", "0.25", "--min-repeat-consistency", "0.8")
    survey = Survey.objects.get(name="ab")
    assert (survey.max_position_bias, survey.min_position_judgements) == (0.25, 20)
    assert (survey.min_repeat_consistency, survey.min_repeats) == (0.8, 3)
    assert settings_of(survey).max_position_bias == 0.25
    with pytest.raises(CommandError, match=r"min_repeat_consistency: .*less than or equal to 1"):
        call_command(*common, "--name", "ab-2", "--min-repeat-consistency", "1.5")
    assert not Survey.objects.filter(name="ab-2").exists()
