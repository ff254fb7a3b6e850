"""Every count and agreement figure of a report describes exactly the population its filters
select, and says which (browser walk F01); the owner can follow an excluded pseudonym to the
quality page, staff cannot (F21).

A tiny study counted by hand: 6 contexts x 3 systems, 4 annotators who rate every response; the
quality rules are off (kappa threshold below -1) and the researcher excludes w4 by hand. Kappa and
alpha are recomputed here with a plain Cohen's kappa and the `krippendorff` package.
"""

import html
import io
import itertools
import json
import re
import statistics
import zipfile
from collections import Counter

import krippendorff
import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from analysis.models import Report
from analysis.report.population import population_text
from analysis.services.build import report_build
from analysis.services.exports import to_latex, to_zip
from analysis.services.page import display_table
from annotation.models import Annotator, Response
from annotation.quality.services import exclusion_override
from scoring.models import MetricScore
from tests.factories import load_dataset_records, load_rating_records

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_cache")]

SYSTEMS = ("s1", "s2", "s3")
WORKERS = ("w1", "w2", "w3", "w4")
N_CONTEXTS = 6


def score_of(worker, context, system):
    base = 1 + (context * 7 + SYSTEMS.index(system) * 3) % 5  # the "true" quality, 1..5
    if worker == "w4":  # careless: unrelated to the others
        return 1 + (context * 3 + SYSTEMS.index(system) * 4 + 2) % 5
    shift = {"w1": 0, "w2": (context + SYSTEMS.index(system)) % 3 - 1, "w3": (context % 2)}[worker]
    return min(5, max(1, base + shift))


RATINGS = [
    {"context_id": f"c{c}", "system": s, "worker": w, "score": score_of(w, c, s)}
    for c in range(N_CONTEXTS)
    for s in SYSTEMS
    for w in WORKERS
]


@pytest.fixture
def tiny(researcher, settings, tmp_path):
    settings.ANALYSIS_BOOTSTRAP_SAMPLES = 20
    settings.ANALYSIS_PERMUTATIONS = 20
    settings.MEDIA_ROOT = tmp_path
    records = [
        {
            "context_id": f"c{c}",
            "context": [{"speaker": "A", "text": f"question {c}?"}],
            "references": [f"reference answer {c}"],
            "responses": [{"system": s, "text": " ".join(["word"] * (1 + (c + i) % 4))} for i, s in enumerate(SYSTEMS)],
        }
        for c in range(N_CONTEXTS)
    ]
    dataset = load_dataset_records(records=records, name="tiny", owner=researcher)
    survey = load_rating_records(records=RATINGS, dataset=dataset, survey_name="tiny-survey", owner=researcher)
    survey.kappa_threshold = -2.0  # the rules exclude nobody: the researcher's decision below is the only one
    survey.min_seconds_per_item = 0
    survey.save()
    MetricScore.objects.bulk_create(
        MetricScore(response=r, metric="length", version="t", value=float(len(r.text.split())))
        for r in Response.objects.filter(context__dataset=dataset)
    )
    w4 = Annotator.objects.get(worker_id="w4")
    exclusion_override(survey=survey, annotator=w4, excluded=True, note="careless, by hand", user=researcher)
    return dataset, survey


def kept(systems, apply_exclusions):
    return [
        r for r in RATINGS if (not systems or r["system"] in systems) and (not apply_exclusions or r["worker"] != "w4")
    ]


def cohen_kappa(a, b, labels=(1, 2, 3, 4, 5)):
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    ca, cb = Counter(a), Counter(b)
    expected = sum(ca[v] * cb[v] for v in labels) / n / n
    return (observed - expected) / (1 - expected)


def hand_kappa_alpha(rows):
    by_worker = {}
    for r in rows:
        by_worker.setdefault(r["worker"], {})[(r["context_id"], r["system"])] = r["score"]
    kappas = []
    for a, b in itertools.combinations(sorted(by_worker), 2):
        shared = sorted(set(by_worker[a]) & set(by_worker[b]))
        if len(shared) >= 5:
            kappas.append(cohen_kappa([by_worker[a][i] for i in shared], [by_worker[b][i] for i in shared]))
    items = sorted({(r["context_id"], r["system"]) for r in rows})
    workers = sorted(by_worker)
    matrix = np.array([[by_worker[w].get(i, np.nan) for i in items] for w in workers], dtype=float)
    alpha = krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal", value_domain=[1, 2, 3, 4, 5])
    return statistics.median(kappas), alpha, len(kappas)


CASES = [
    pytest.param(None, True, id="no-filter"),
    pytest.param(("s1", "s2"), True, id="systems"),
    pytest.param(None, False, id="exclusions-ignored"),
    pytest.param(("s1", "s2"), False, id="both"),
]


@pytest.mark.parametrize(("systems", "apply_exclusions"), CASES)
def test_counts_and_agreement_describe_the_filtered_population(tiny, systems, apply_exclusions):
    dataset, _survey = tiny
    data = report_build(dataset=dataset, systems=systems, apply_exclusions=apply_exclusions, n_boot=0)
    rows = kept(systems, apply_exclusions)
    before = kept(systems, False)
    assert data["n_ratings"] == len(rows)
    assert data["n_responses"] == len({(r["context_id"], r["system"]) for r in rows})
    assert data["filters"]["n_ratings_before_exclusions"] == len(before)
    assert data["filters"]["excluded_annotators"] == (["w4"] if apply_exclusions else [])
    kappa, alpha, n_pairs = hand_kappa_alpha(rows)
    figures = data["population_agreement"]
    assert figures["population"] == ("accepted" if apply_exclusions else "all")
    assert figures["n_ratings"] == len(rows)
    assert figures["n_annotators"] == (3 if apply_exclusions else 4)
    assert figures["n_pairs"] == n_pairs
    assert figures["median_kappa"] == pytest.approx(kappa, abs=1e-9)
    assert figures["alpha"] == pytest.approx(alpha, abs=1e-9)


@pytest.mark.parametrize(("systems", "apply_exclusions"), CASES)
def test_the_population_sentence_names_the_counts_and_no_exclusion_when_ignored(tiny, systems, apply_exclusions):
    dataset, _survey = tiny
    data = report_build(dataset=dataset, systems=systems, apply_exclusions=apply_exclusions, n_boot=0)
    text = population_text(data)
    n, before = len(kept(systems, apply_exclusions)), len(kept(systems, False))
    if apply_exclusions:
        assert f"{n} accepted ratings ({before} before exclusions)" in text
        assert "excluded annotators with answers here: w4" in text
    else:
        assert f"{n} ratings" in text
        assert "accepted" not in text and "before exclusions" not in text and "w4" not in text
        assert "exclusions ignored" in text
    if systems:
        assert "systems s1, s2 only" in text
    # quality control's agreement tables stay survey-wide, and say so
    for name in ("agreement_pairs", "agreement_annotators"):
        assert "Quality control's figures for the whole survey" in display_table(data, name).note
    # the exports carry the same sentence: the zip's README and the LaTeX header
    archive = zipfile.ZipFile(io.BytesIO(to_zip(data, readme="note\n")))
    assert text in archive.read("README.txt").decode()
    assert text in to_latex(data)


def population_line(body):
    return (
        re.search(r'<p class="report-meta" id="report-population">(.*?)</p>', body, re.S).group(1).split("Computed")[0]
    )


def compute(client, url, capture):
    with capture(execute=True):
        client.get(url)
    return client.get(url).content.decode()


def test_page_and_json_under_a_systems_filter_with_exclusions_ignored(
    researcher_client, tiny, django_capture_on_commit_callbacks
):
    dataset, _survey = tiny
    url = reverse("analysis:dataset_report", args=[dataset.pk]) + "?aspect=overall&systems=s1&systems=s2&exclusions=0"
    body = compute(researcher_client, url, django_capture_on_commit_callbacks)
    meta = population_line(body)
    assert "36 responses" not in meta  # 12 responses (6 contexts x 2 systems), 48 ratings
    assert "12 responses, 48 ratings" in meta
    assert "before exclusions" not in meta and "excluded annotators" not in meta and "accepted" not in meta
    kappa, alpha, _ = hand_kappa_alpha(kept(("s1", "s2"), False))
    ceiling = html.unescape(re.search(r'<h2 id="t-ceiling">Human ceiling</h2>\s*<p>(.*?)</p>', body, re.S).group(1))
    assert f"median Cohen's κ {kappa:.3f}" in ceiling and f"Krippendorff's α {alpha:.3f}" in ceiling
    assert "all 48 ratings (exclusions ignored) of 4 annotators" in ceiling
    report = Report.objects.get(dataset=dataset, params__apply_exclusions=False)
    exported = json.loads(researcher_client.get(reverse("analysis:report_export", args=[report.pk, "json"])).content)
    assert exported["filters"]["n_ratings_before_exclusions"] == 48
    assert exported["filters"]["excluded_annotators"] == []
    assert exported["population_agreement"]["alpha"] == pytest.approx(alpha, abs=1e-9)
    assert exported["population"] == population_text(exported)


def test_a_pseudonymised_download_names_excluded_annotators_without_their_database_ids(
    researcher_client, tiny, django_capture_on_commit_callbacks
):
    dataset, _survey = tiny
    compute(
        researcher_client, reverse("analysis:dataset_report", args=[dataset.pk]), django_capture_on_commit_callbacks
    )
    report = Report.objects.get(dataset=dataset, params__apply_exclusions=True)
    assert report.data["filters"]["excluded_annotator_refs"]  # the page's links need them
    exported = json.loads(researcher_client.get(reverse("analysis:report_export", args=[report.pk, "json"])).content)
    assert exported["filters"]["excluded_annotators"] == ["A4"]
    assert "excluded_annotator_refs" not in exported["filters"]
    assert "w4" not in json.dumps(exported)


def test_the_owner_follows_an_excluded_pseudonym_to_the_quality_page_staff_see_pseudonyms_only(
    researcher_client, client, tiny, django_capture_on_commit_callbacks
):
    dataset, survey = tiny
    url = reverse("analysis:dataset_report", args=[dataset.pk])
    body = compute(researcher_client, url, django_capture_on_commit_callbacks)
    w4 = Annotator.objects.get(worker_id="w4")
    link = reverse("annotation:quality_annotator", args=[survey.pk, w4.pk])
    meta = population_line(body)
    assert f'<a href="{link}"' in meta and ">A4</a>" in meta
    assert "w4" not in body  # the report page stays pseudonymised, for the owner too
    quality = researcher_client.get(link)
    assert quality.status_code == 200 and "w4" in quality.content.decode()  # the real id is one click away
    staff = get_user_model().objects.create_user("staffer", password="pw", is_staff=True, is_superuser=True)
    client.force_login(staff)
    staff_body = client.get(url).content.decode()
    staff_meta = population_line(staff_body)
    assert "excluded annotators with answers here: A4" in staff_meta
    assert "w4" not in staff_body and link not in staff_body
    staff_quality = client.get(link)  # an admin may open the quality page, which names workers by pseudonym
    assert staff_quality.status_code == 200 and "w4" not in staff_quality.content.decode()
