"""A pairwise judge's page speaks of pairs: what it judges, the position-swap figures of each
judging, no rating figures (mean score, spread, the metric judge:NAME); a rating judge's page is unchanged."""

import pytest
from django.core.management import call_command
from django.urls import reverse

from scoring.judges import prompts
from scoring.models import JudgeUsage
from tests.scoring.judge_helpers import make_judge
from tests.scoring.test_judges_pairwise_study import always_first, picks_the_good_reply, study  # noqa: F401

pytestmark = pytest.mark.django_db


def _page(client, judge):
    return client.get(reverse("scoring:judge_detail", args=[judge.pk])).content.decode()


def test_a_pairwise_judges_page_shows_what_it_judges_and_the_swap_figures_without_rating_wording(
    study,  # noqa: F811
    researcher,
    researcher_client,
    chat_server,
):
    chat_server.answer = picks_the_good_reply
    judge = make_judge(researcher, chat_server, name="oracle", template=prompts.PAIRWISE)
    assert "Not run yet: judge a dataset's pairs below" in _page(researcher_client, judge)
    call_command("judge_pairs", "--judge", "oracle", "--dataset", "ab")
    usage = JudgeUsage.objects.get(judge=judge)
    assert usage.figures["n_pairs"] == 6 and usage.figures["self_consistency"] == 1.0
    html = _page(researcher_client, judge)
    assert "Which of two replies to a conversation is the better next turn" in html
    assert "1 sample per prompt (two prompts per pair)" in html and "(two per pair, one in each order)" in html
    figures = html.split('id="judge-pairs-figures"', 1)[1].split("</table>", 1)[0]
    assert "Same winner after the swap" in figures and "First-position picks" in figures
    row = figures.split("pairs of ab", 1)[1].split("</tr>", 1)[0]
    assert '<td class="num">6</td><td class="num">0.500</td>' in row
    assert '<td class="num">1.000</td>' in row and "of 6" in row and "0 / 12" in row
    for rating_only in ("mean score", "spread across samples", "<dt>Metric</dt>", "judge:oracle", "gave no score"):
        assert rating_only not in html
    assert "every reply gave a winner (A or B)" in html
    assert "Removes the judge, its cached verdicts and its usage records" in html


def test_a_judge_that_always_picks_first_shows_full_position_bias_on_its_page(
    study,  # noqa: F811
    researcher,
    researcher_client,
    chat_server,
):
    chat_server.answer = always_first
    judge = make_judge(researcher, chat_server, name="firsty", template=prompts.PAIRWISE)
    call_command("judge_pairs", "--judge", "firsty", "--dataset", "ab")
    row = _page(researcher_client, judge).split("pairs of ab", 1)[1].split("</tr>", 1)[0]
    assert '<td class="num">6</td><td class="num">1.000</td>' in row and '<td class="num">0.000</td>' in row


def test_a_rating_judges_page_keeps_its_metric_and_score_wording(researcher, researcher_client, chat_server):
    judge = make_judge(researcher, chat_server, name="rater")
    html = _page(researcher_client, judge)
    assert "<dt>Metric</dt><dd><code>judge:rater</code></dd>" in html and "per response" in html
    # not run yet: no reply came, so none "gave a score" (F15)
    assert "No reply yet" in html and "every reply gave" not in html and 'id="judge-pairs-figures"' not in html
    listing = researcher_client.get(reverse("scoring:judges")).content.decode()
    assert "judge:rater" in listing
