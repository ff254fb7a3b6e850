"""Best-worst sets across contexts: balanced tuples of replies to different contexts, laid out per
HIT, shown each under its own conversation, stored without a context, exported and reported; the
scores checked on generated data against a direct computation."""

import io
import json
import random
from collections import Counter, defaultdict
from itertools import combinations

import pytest
from django.core.management import call_command

from analysis.sections.bws import bws_section
from annotation import services
from annotation.kinds.bws.across_layout import across_chunks
from annotation.kinds.bws.across_tuples import across_tuples, appearance_spread, cross_pair_counts
from annotation.models import BWSJudgement, HITItem, Response, Survey
from annotation.views.task_page.items import hit_blocks
from tests.annotation.studies_helpers import make_survey

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("n_contexts", "n_systems", "size"), [(5, 4, 4), (4, 4, 4), (6, 3, 4), (5, 5, 3), (8, 4, 4)])
def test_tuples_cross_contexts_and_are_balanced(n_contexts, n_systems, size):
    items = [(c, f"r{c}-{s}") for c in range(n_contexts) for s in range(n_systems)]
    tuples = across_tuples(items, size, random.Random(7))
    assert all(len(members) == size and len({c for c, _ in members}) == size for members in tuples)
    # counted directly: every reply shown 2 or 2±1 times, as often as any other within one
    shown = Counter(item for members in tuples for item in members)
    assert set(shown) == set(items) and max(shown.values()) - min(shown.values()) <= 1
    assert appearance_spread(tuples, items) == max(shown.values()) - min(shown.values())
    assert sum(shown.values()) == len(tuples) * size and len(tuples) == -(-2 * len(items) // size)
    # pairs of replies to different contexts meet at most once (none twice while others never)
    met = Counter(frozenset(pair) for members in tuples for pair in combinations(members, 2))
    assert max(met.values()) <= 1
    assert dict(met) == {pair: n for pair, n in cross_pair_counts(tuples, items).items() if n}


def test_a_remainder_too_small_for_a_set_joins_the_hit_before():
    assert across_chunks(list(range(11)), 4, 4) == [[0, 1, 2, 3], [4, 5, 6, 7, 8, 9, 10]]
    assert across_chunks(list(range(8)), 4, 4) == [[0, 1, 2, 3], [4, 5, 6, 7]]


def across_survey(owner, **settings):
    settings = {"contexts_per_hit": 4, "attention_checks_per_hit": 1, "assignments_per_hit": 2, **settings}
    return make_survey(
        owner, name="across", task_type="bws", bws_across_contexts=True, tuple_size=4, n_contexts=12, **settings
    )


def test_the_layout_draws_sets_of_replies_to_different_contexts_with_a_planted_broken_reply(researcher):
    survey = across_survey(researcher)
    context_of = dict(Response.objects.filter(context__dataset=survey.dataset).values_list("pk", "context_id"))
    for hit in survey.hits.all():
        items = list(hit.items.order_by("position"))
        real = [item for item in items if item.kind == HITItem.Kind.BWS]
        gold = [item for item in items if item.kind == HITItem.Kind.BWS_GOLD]
        assert len(gold) == 1 and real
        for item in real:
            assert item.context_id is None
            assert len({context_of[pk] for pk in item.tuple_responses}) == 4
        members = gold[0].tuple_responses
        assert members.count(None) == 1 and gold[0].context_id not in {context_of[pk] for pk in members if pk}
        shown = Counter(pk for item in real for pk in item.tuple_responses)
        assert max(shown.values()) - min(shown.values()) <= 1


def test_too_few_contexts_per_hit_is_refused_saying_what_to_give(researcher):
    with pytest.raises(services.HITLayoutError, match="at least 4 contexts per HIT"):
        across_survey(researcher, contexts_per_hit=3)


def test_the_page_shows_each_reply_under_its_own_conversation_and_no_system_name(researcher):
    survey = across_survey(researcher)
    hit = survey.hits.first()
    blocks = hit_blocks(survey=survey, items=hit.items.order_by("position").select_related("context"))
    assert all(block["template"].endswith("_across_block.html") for block in blocks)
    from django.template.loader import render_to_string

    html = render_to_string("annotation/task/_items.html", {"blocks": blocks, "preview": False})
    for block in blocks:
        replies = block["items"][0]["replies"]
        assert len(replies) == 4 and all(reply["turns"] for reply in replies)
    assert "hello number" in html and "hred" not in html and "secret reference" not in html


def simulate(survey, seed=3):
    call_command("simulate_ratings", survey.name, stdout=io.StringIO(), seed=seed)


def test_simulated_judgements_export_and_report_match_a_direct_count(researcher, settings):
    settings.ANALYSIS_BOOTSTRAP_SAMPLES = 20
    survey = across_survey(researcher, attention_checks_per_hit=0)
    services.survey_launch(survey=survey)
    simulate(survey)
    judgements = list(BWSJudgement.objects.filter(survey=survey))
    assert judgements and all(j.context_id is None for j in judgements)
    system_of = dict(Response.objects.filter(context__dataset=survey.dataset).values_list("pk", "system__name"))
    context_of = dict(
        Response.objects.filter(context__dataset=survey.dataset).values_list("pk", "context__external_id")
    )
    # direct counting: (best - worst) / appearances per system
    best, worst, shown = defaultdict(int), defaultdict(int), defaultdict(int)
    for j in judgements:
        for pk in j.responses:
            shown[system_of[pk]] += 1
        best[system_of[j.best_id]] += 1
        worst[system_of[j.worst_id]] += 1
    # Every judgement: the simulation's careless annotators may or may not be excluded by the quality
    # rules depending on the random layout, and this checks the counting, not the exclusions.
    section = bws_section(dataset=survey.dataset, n_boot=20, apply_exclusions=False)
    by_system = {row["system"]: row for row in section["systems"]}
    for name, n in shown.items():
        assert by_system[name]["n"] == n
        assert by_system[name]["count_score"] == pytest.approx((best[name] - worst[name]) / n)
    assert section["n_judgements"] == len(judgements)
    assert section["n_contexts"] == len({context_of[pk] for j in judgements for pk in j.responses})
    assert section["across_contexts"] is True
    # the export: one line per judgement, each shown reply's context in shown order
    stream = io.StringIO()
    call_command("export_bws", survey=str(survey.pk), stdout=stream)
    lines = [json.loads(line) for line in stream.getvalue().splitlines() if line.startswith("{")]
    assert len(lines) == len(judgements)
    by_key = {(tuple(line["context_ids"]), line["best"], line["worst"]) for line in lines}
    expected = {
        (tuple(context_of[pk] for pk in j.responses), system_of[j.best_id], system_of[j.worst_id]) for j in judgements
    }
    assert by_key == expected
    assert all(line["context_id"] is None and len(set(line["context_ids"])) == 4 for line in lines)


def test_the_form_offers_the_option_and_the_command_takes_it(researcher, researcher_client):
    dataset = make_survey(researcher, name="base", launch=False).dataset
    call_command(
        "create_survey", dataset=dataset.name, name="cmd-across", task_type="bws", across_contexts=True,
        contexts_per_hit=4, draft=True, stdout=io.StringIO(),
    )  # fmt: skip
    assert Survey.objects.get(name="cmd-across").bws_across_contexts is True
    page = researcher_client.get("/surveys/new/").content.decode()
    assert 'name="bws_across_contexts"' in page


def test_the_estimate_counts_the_sets_the_layout_makes(researcher):
    survey = across_survey(researcher, contexts_per_hit=4, attention_checks_per_hit=1)
    estimate = services.survey_estimate_for(survey=survey)
    first = survey.hits.order_by("position").first()
    assert estimate["items_per_hit"] == first.items.count()
