"""The report's sections as a registry (issue 36, point 2): every registered section's JSON keys and
CSV tables are in the full report's downloads, its LaTeX tables in the LaTeX download, and the report
page shows the sections in the registry's order."""

import io
import json
import zipfile

import numpy as np
import pytest
from django.urls import reverse

from analysis.models import Report
from analysis.sections.registry import SECTIONS, TABLES
from analysis.services.exports import to_latex
from annotation.kinds.pairwise.imports import pairwise_import
from annotation.models import (
    Annotator,
    BWSJudgement,
    Context,
    Conversation,
    ConversationAspect,
    ConversationJudgement,
    ConversationRating,
    ConversationTurn,
    Response,
    Survey,
    System,
)
from scoring.models import MetricScore
from scoring.services.metrics.conversations import conversation_metrics_compute
from tests.factories import load_dataset_records, load_rating_records

pytestmark = pytest.mark.django_db

WORKERS = ("w1", "w2", "w3")
N_CONTEXTS = 30


def human_score(i, worker):
    """Annotators who mostly agree: w3 one point off now and then."""
    base = 1 + (i * 7) % 5
    return min(5, base + 1) if worker == "w3" and i % 4 == 0 else base


@pytest.fixture
def full_study(researcher, settings, tmp_path):
    """A dataset every section has something to say about: rated responses of two systems, overlap
    metrics with a no-stopword variant, an LLM judge, a pairwise survey of the same responses, and
    conversations of the same systems."""
    settings.ANALYSIS_BOOTSTRAP_SAMPLES = 20
    settings.ANALYSIS_PERMUTATIONS = 50
    settings.MEDIA_ROOT = tmp_path
    records = [
        {"context_id": f"k{i}", "context": ["hello", f"question {i}?"], "references": ["an answer"],
         "responses": [{"system": "short", "text": "ok"},
                       {"system": "long", "text": " ".join(["word"] * (3 + i % 9))}]}
        for i in range(N_CONTEXTS)
    ]  # fmt: skip
    dataset = load_dataset_records(records=records, name="full", owner=researcher)
    ratings = [
        {"context_id": f"k{i}", "system": system, "worker": worker, "score": human_score(2 * i + s, worker)}
        for i in range(N_CONTEXTS)
        for s, system in enumerate(("short", "long"))
        for worker in WORKERS
    ]
    load_rating_records(records=ratings, dataset=dataset, survey_name="full-ratings", owner=researcher)
    rng = np.random.default_rng(5)
    scores = []
    for response in Response.objects.filter(context__dataset=dataset).select_related("context", "system"):
        i = int(response.context.external_id[1:])
        s = 0 if response.system.name == "short" else 1
        mean = float(np.mean([human_score(2 * i + s, w) for w in WORKERS]))
        values = {
            "bleu2": rng.random(),
            "bleu2_nostop": rng.random(),
            "rouge_l": mean / 5 + rng.normal(0, 0.1),
            "judge:mean": float(np.floor(mean + 0.5)),
        }
        scores += [MetricScore(response=response, metric=name, version="t", value=v) for name, v in values.items()]
    MetricScore.objects.bulk_create(scores)
    lines = [
        {"context_id": f"k{i}", "system_a": "long", "system_b": "short", "worker": worker,
         "winner": "a" if (i + w) % 3 else "b"}
        for i in range(N_CONTEXTS)
        for w, worker in enumerate(("p1", "p2"))
    ]  # fmt: skip
    survey = pairwise_import(
        file="".join(json.dumps(x) + "\n" for x in lines).encode(), dataset=dataset, fmt="jsonl", survey_name="full-ab"
    )
    Survey.objects.filter(pk=survey.pk).update(kappa_threshold=-1.0)  # keep both pairwise annotators
    add_conversations(dataset)
    _bws_judgements(dataset, researcher)
    return dataset


def add_conversations(dataset):
    """Conversations of the same two systems beside the responses (a dataset may hold both), rated
    whole and per turn, compared side by side and scored, so the Conversations section applies."""
    systems = {system.name: system for system in dataset.systems.all()}
    annotators = [Annotator.objects.create(provider="imported", worker_id=w) for w in ("c1", "c2")]
    ConversationAspect.objects.create(dataset=dataset, key="overall", scale_min=1, scale_max=5)
    ConversationAspect.objects.create(dataset=dataset, key="repetitive", scale_min=0, scale_max=1)
    made = []
    for i in range(12):
        name = ("short", "long")[i % 2]
        conversation = Conversation.objects.create(dataset=dataset, external_id=f"d{i}", position=i,
                                                   system=systems[name])  # fmt: skip
        for index in range(2 + i % 4):
            speaker = ("user", "system")[index % 2]
            ConversationTurn.objects.create(conversation=conversation, index=index, speaker=speaker,
                                            text=f"turn {index} of {i}?")  # fmt: skip
        turn = conversation.turns.get(index=1)
        for a, annotator in enumerate(annotators):
            ConversationRating.objects.create(annotator=annotator, conversation=conversation,
                                              score=1 + (i + a + (i % 2) * 2) % 5)  # fmt: skip
            ConversationRating.objects.create(annotator=annotator, conversation=conversation, turn=turn,
                                              aspect="repetitive", score=(i + a) % 2)  # fmt: skip
        made.append(conversation)
    for i in range(0, 12, 2):
        ConversationJudgement.objects.create(annotator=annotators[(i // 2) % 2], conversation_a=made[i],
                                             conversation_b=made[i + 1], winner="ab"[i % 3 == 0],
                                             question="Who would you prefer to talk to?")  # fmt: skip
    conversation_metrics_compute(dataset=dataset)


def _bws_judgements(dataset, researcher):
    """Best-worst judgements of tuples of three: the two systems and a third, "mid", whose replies
    only these judgements see (no ratings, metric scores or pairs: the other sections ignore it)."""
    mid = System.objects.create(dataset=dataset, name="mid")
    survey = Survey.objects.create(
        dataset=dataset, owner=researcher, name="full-bws", task_type=Survey.TaskType.BWS, kappa_threshold=-1.0
    )
    judgements = []
    for context in Context.objects.filter(dataset=dataset).order_by("position"):
        by_system = {r.system.name: r.pk for r in Response.objects.filter(context=context).select_related("system")}
        by_system["mid"] = Response.objects.create(context=context, system=mid, text="fine, thanks").pk
        shown = [by_system["short"], by_system["mid"], by_system["long"]]
        for n, worker in enumerate(("b1", "b2")):
            annotator = Annotator.objects.get_or_create(provider="local", worker_id=worker)[0]
            best, worst = (shown[2], shown[0]) if (context.position + n) % 4 else (shown[1], shown[2])
            judgements.append(
                BWSJudgement(survey=survey, annotator=annotator, context=context, responses=shown, best_id=best,
                             worst_id=worst)
            )  # fmt: skip
    BWSJudgement.objects.bulk_create(judgements)


@pytest.fixture
def computed(full_study, researcher_client, django_capture_on_commit_callbacks):
    url = reverse("analysis:dataset_report", args=[full_study.pk])
    with django_capture_on_commit_callbacks(execute=True):
        researcher_client.get(url)
    report = Report.objects.get(dataset=full_study, survey=None)
    assert report.status == Report.Status.READY, report.error
    return report


def test_every_section_has_a_distinct_name_and_every_table_one_section():
    names = [section.name for section in SECTIONS]
    assert len(names) == len(set(names))
    assert "pairwise" in names  # the name the pairwise task kind's `report_section` names
    assert len(TABLES) == len(set(TABLES))


def test_every_sections_json_keys_and_csv_tables_are_in_the_full_reports_downloads(researcher_client, computed):
    exported = json.loads(researcher_client.get(reverse("analysis:report_export", args=[computed.pk, "json"])).content)
    archive = zipfile.ZipFile(
        io.BytesIO(researcher_client.get(reverse("analysis:report_export", args=[computed.pk, "zip"])).content)
    )
    in_zip = json.loads(archive.read("report.json"))
    for section in SECTIONS:
        for key in section.keys:
            assert key in exported and key in in_zip, (section.name, key)
            assert exported[key] not in (None, {}), (section.name, key)  # the full study fills every part
        for table in section.tables:
            header = archive.read(f"{table}.csv").decode().splitlines()[0]
            assert header, (section.name, table)
            response = researcher_client.get(
                reverse("analysis:report_export", args=[computed.pk, "csv"]) + f"?table={table}"
            )
            assert response.status_code == 200 and response.content.decode().splitlines()[0] == header
    latex = to_latex(computed.data)
    for section in SECTIONS:
        for part in section.latex(computed.data) if section.latex else []:
            assert part in latex, section.name


def test_the_page_shows_the_sections_that_apply_in_the_registrys_order(researcher_client, computed):
    body = researcher_client.get(reverse("analysis:dataset_report", args=[computed.dataset.pk])).content.decode()
    positions = []
    for section in SECTIONS:
        if section.template is None:
            continue
        assert section.applies(computed.data), section.name  # the full study shows every section
        context = section.present(computed.data)
        anchors = [anchor for anchor, _label in section.nav(computed.data, context)]
        assert anchors, section.name
        for anchor in anchors:
            assert f'href="#{anchor}"' in body, (section.name, anchor)
        positions.append((body.index(f'id="{anchors[0]}"'), section.name))
    assert positions == sorted(positions), positions
