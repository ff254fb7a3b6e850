"""What the tests of attention-check blocks share (gold and instructed checks are laid out alike:
their reply among fillers, in a block shaped as a real one): the page's block skeletons, a started
task page, the analyses' figures and a tampered filler answer."""

import re
from collections import Counter
from html.parser import HTMLParser

from django.db import transaction
from django.test import Client

from annotation import services
from annotation.models import Assignment, AttentionAnswer, HITItem, Rating
from annotation.quality.services import quality_recompute
from annotation.selectors import human_scores
from tests.annotation.link_helpers import start_task

TAMPERED = {
    "out of scale": "outside the scale",
    "not a number": "is not a score",
    "unknown scale": "unknown question",
    "left out": "still unanswered",
}


class BlockSkeletons(HTMLParser):
    """Each task block of a page as its markup alone: tags and attributes in order, every number
    (ids, item numbers, scale values) written N and every text left out."""

    def __init__(self):
        super().__init__()
        self.blocks, self.ids, self.inside = [], [], False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "section" and "task-block" in (attrs.get("class") or ""):
            self.inside = True
            self.blocks.append([])
            self.ids.append([])
        if not self.inside:
            return
        if "data-item" in attrs:
            self.ids[-1].append(int(attrs["data-item"]))
        shape = tuple(sorted((name, re.sub(r"\d+", "N", value or "")) for name, value in attrs.items()))
        self.blocks[-1].append(("start", tag, shape))

    def handle_endtag(self, tag):
        if self.inside:
            self.blocks[-1].append(("end", tag))
            self.inside = tag != "section"


def task_page(survey, worker="w1"):
    """`(client, task url, assignment, page html)` of a task started through the survey link."""
    client = Client()
    url = start_task(client, survey, worker)
    assignment = Assignment.objects.get(token=url.rstrip("/").rsplit("/", 1)[-1])
    return client, url, assignment, client.get(url).content.decode()


def analysis_figures(survey, assignments, answers_for):
    """The analyses' figures after each assignment is submitted with `answers_for(assignment, n)`
    (rolled back afterwards, so that the same assignments can be submitted again)."""
    with transaction.atomic():
        for n, assignment in enumerate(assignments):
            services.assignment_submit(assignment=assignment, answers=answers_for(assignment, n))
        report = quality_recompute(survey=survey).data
        figures = {
            "per_response": Counter(Rating.objects.values_list("response_id", flat=True)),
            "human_scores": human_scores(dataset=survey.dataset, apply_exclusions=False),
            "n_ratings": report["n_ratings"],
            "attention": report["attention"],
            "annotators": [(a["worker"], a["kappa"], a["excluded"], a["attention"]) for a in report["annotators"]],
        }
        transaction.set_rollback(True)
    return figures


def assert_filler_answers_change_no_figure(survey, figures, *, filler_kind, check):
    """Three annotators on one HIT with one check block: the analyses' figures (`figures(survey,
    assignments, filler_score)`) are the same whatever the fillers are answered, and count each
    real reply three times, no filler, and the three checks under `check` ("gold", "instructed")."""
    assignments = [services.assignment_claim(survey=survey, worker_id=f"w{n}") for n in range(3)]
    assert len({a.hit_id for a in assignments}) == 1
    low, high = figures(survey, assignments, 1), figures(survey, assignments, 5)
    assert low == high

    shown = services.assignment_items(assignment=assignments[0])
    real = {item.response_id for item in shown if item.kind == HITItem.Kind.RESPONSE}
    fillers = {item.response_id for item in shown if item.kind == filler_kind}
    assert len(fillers) == 3 and not fillers & real
    assert low["per_response"] == dict.fromkeys(real, 3), "three ratings of each real reply, none of a filler"
    assert set(low["human_scores"]) == real and low["n_ratings"] == 3 * 12
    assert low["attention"] == {check: {"total": 3, "failed": 0}}


def assert_a_tampered_filler_refuses_the_whole_submission(tamper, *, client, url, assignment, page, answers):
    """Posts the page's answers (`answers`: the check's own, by field) with one filler answer
    tampered: refused, nothing stored; then the same answers untampered: stored."""
    filler = answers.pop("filler")
    data = dict.fromkeys(set(re.findall(r'name="(score-\d+-[\w-]+)"', page)), "3") | answers
    field = f"score-{filler.pk}-overall"
    assert field in data
    if tamper == "out of scale":
        data[field] = "9"
    elif tamper == "not a number":
        data[field] = "3; DROP TABLE"
    elif tamper == "unknown scale":
        data[f"score-{filler.pk}-made_up"] = "3"
    else:
        del data[field]

    refused = client.post(url, data)
    assert refused.status_code == 400 and TAMPERED[tamper] in refused.content.decode()
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.ACTIVE
    assert not Rating.objects.exists() and not AttentionAnswer.objects.exists()

    data.pop(f"score-{filler.pk}-made_up", None)
    data[field] = "3"
    assert client.post(url, data).status_code == 302, "the same answers, untampered, are stored"
    assert Rating.objects.count() == 12 and AttentionAnswer.objects.get().passed
