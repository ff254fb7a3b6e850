"""The report page leads with the ranking and labels what each interval resampled (issue 20)."""

import re

import pytest
from django.urls import reverse

from tests.analysis.test_report_readable import computed, page_url, section  # noqa: F401 (fixture)

pytestmark = [pytest.mark.django_db, pytest.mark.shared_data]


def test_the_ranking_is_the_first_table_and_every_tested_pair_is_one_click_away(researcher_client, computed):  # noqa: F811
    body = researcher_client.get(page_url(computed.dataset)).content.decode()
    first_table = re.search(r'<section aria-labelledby="t-([a-z_]+)">', body).group(1)
    assert first_table == "ranking"
    ranking = section(body, "ranking")
    clusters = computed.data["clusters"]
    assert len(re.findall(r'<th scope="row">\d+</th>', ranking)) == len(clusters)
    assert "paired permutation test" in ranking and "1,000 permutations" in ranking
    assert "Show every pair (3)" in ranking  # three metrics: three pairs behind the toggle
    all_pairs = researcher_client.get(reverse("analysis:report_table", args=[computed.pk, "ranking"]))
    assert "Paired permutation tests, every pair of metrics" in all_pairs.content.decode()


def test_each_level_says_what_its_intervals_resampled(researcher_client, computed):  # noqa: F811
    body = researcher_client.get(page_url(computed.dataset)).content.decode()
    assert "percentile bootstrap over the 300 responses" in section(body, "utterance_level")
    system = section(body, "system_level")
    assert "Resampled: the systems and the contexts together (Boot-Both" in system
    assert "Kendall τ-b" in system
    assert "Tie threshold ε" in section(body, "pairwise_accuracy")
