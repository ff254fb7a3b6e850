"""Small study builders shared by the studies tests (import-format records → dataset → survey)."""

from annotation import services
from annotation.models import Aspect, HITItem
from tests.factories import load_dataset_records

SYSTEMS = ("hred", "tfidf", "human", "de")


def dataset_records(n_contexts=12, systems=SYSTEMS):
    return [
        {
            "context_id": f"c{i:03d}",
            "context": [f"hello number {i}", {"speaker": "B", "text": f"how are you {i}?"}],
            "references": [f"secret reference {i}"],
            "responses": [{"system": s, "text": f"reply {i} option {j}"} for j, s in enumerate(systems)],
        }
        for i in range(n_contexts)
    ]


def make_survey(
    owner, *, n_contexts=12, name="study", launch=True, dataset_systems=SYSTEMS, dataset_name=None, **settings
):
    dataset = load_dataset_records(
        records=dataset_records(n_contexts, dataset_systems), name=dataset_name or f"ds-{name}", owner=owner
    )
    settings.setdefault("contexts_per_hit", 3)
    settings.setdefault("assignments_per_hit", 2)
    survey = services.survey_create(dataset=dataset, name=name, owner=owner, **settings)
    if launch:
        survey = services.survey_launch(survey=survey)
    return survey


def good_answers(assignment, score=3, seconds=4.0):
    """Answers that fill every item and pass every attention check."""
    items = services.assignment_items(assignment=assignment)
    aspects = list(assignment.hit.survey.aspects.values_list("key", flat=True))
    answers = {}
    for item in items:
        if item.kind in (HITItem.Kind.RESPONSE, *HITItem.FILLERS):
            scores = dict.fromkeys(aspects, score)
        elif item.kind == HITItem.Kind.INSTRUCTED:
            # A lone instruction (laid out before fillers existed) asks the main question only.
            scores = dict.fromkeys([Aspect.OVERALL] if item.asks_main_only else aspects, item.instructed_score)
        elif item.kind == HITItem.Kind.GOLD:
            scores = dict.fromkeys(aspects, item.attention_check.accepted_scores[0])
        else:
            answers[item.pk] = {"scores": {}, "seconds": seconds, "text": f"my reply to {item.context_id}"}
            continue
        answers[item.pk] = {"scores": scores, "seconds": seconds}
    return answers


def survey_form_fields(dataset, *, name, provider, **extra):
    """What a researcher fills in on the survey form for a small rating survey on `provider`."""
    return {
        "dataset": dataset.pk,
        "name": name,
        "task_type": "rate",
        "provider": provider,
        "question": "How appropriate is this response?",
        "instructions": "Rate each reply.",
        "contexts_per_hit": 1,
        "assignments_per_hit": 2,
        "attention_checks_per_hit": 0,
        "overlap_contexts": 0,
        "max_hits_per_annotator": 1,
        "assignment_minutes": 30,
        "reward_cents": 50,
        "attention_policy": "flag",
        **extra,
    }


def rated_by_two_careful_raters_and_a_straight_liner(owner, **settings):
    """A 12-context rating survey (one HIT, three slots) that careful-1 and careful-2 rate by each
    reply's own score and "liner" rates 3 throughout: the integrity tests' small crowd."""
    survey = make_survey(
        owner, n_contexts=12, name="raters", contexts_per_hit=12, assignments_per_hit=3,
        attention_checks_per_hit=0, **settings,
    )  # fmt: skip
    for worker in ("careful-1", "careful-2", "liner"):
        assignment = services.assignment_claim(survey=survey, worker_id=worker)
        answers = {
            item.pk: {"scores": {"overall": str(3 if worker == "liner" else 1 + item.response_id % 5)}, "seconds": "6"}
            for item in services.assignment_items(assignment=assignment)
        }
        services.assignment_submit(assignment=assignment, answers=answers)
    return survey
