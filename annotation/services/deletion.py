"""Deleting a dataset or a survey by its owner: what goes with it, why it may not go now, and the delete.

What goes is what the database's own cascade takes (Django's deletion collector, the same that
`delete()` follows), so the confirmation page lists exactly the rows the delete removes, counted
per table, including those of later layers (metric scores, runs, reports) without annotation
importing them. Rows that only point at the deleted one through a nullable link (an ADEM model
trained on a dataset) are kept, unlinked, and the page says so.

Refused, with a sentence saying why, and nothing deleted:
- while a paid study is live: a Prolific study published and not stopped, or with submissions
  still awaiting review; a (non-sandbox) MTurk HIT not yet expired, or an assignment submitted
  and not yet approved or rejected (workers would be left unpaid and their work unreviewable);
- when the cascade would reach a row of another owner (another researcher's survey on the dataset);
- when it would reach a payment record (bonuses are kept for the accounts: PROTECT);
- while a later layer says a job uses it (scoring: a metrics run or a training run on the
  dataset), through `annotation.services.extensions.deletion_guards`.
"""

from collections import defaultdict
from dataclasses import dataclass, field
from functools import reduce
from operator import or_

from django.db import router, transaction
from django.db.models import ProtectedError, Q, RestrictedError
from django.db.models.deletion import Collector
from django.utils import timezone

from annotation.models import Dataset, MTurkAssignment, MTurkHIT, ProlificStudy, ProlificSubmission, Survey
from annotation.services.extensions.deletion_guards import deletion_guard_reasons

# Prolific's study states in which nobody can still take part or wait for review.
PROLIFIC_NOT_LIVE = ("", "UNPUBLISHED", "COMPLETED")
PROLIFIC_AWAITING = "AWAITING REVIEW"
MTURK_GONE = ("Disposed",)


class DeletionRefused(Exception):
    """A delete was refused; the message is safe to show the researcher."""


@dataclass
class DeletionPlan:
    """What deleting `target` would remove (`rows`: [(label, count)], largest tables first, the
    target's own table first), keep unlinked (`unlinked`), and why it cannot go now (`refusals`)."""

    target: object
    rows: list = field(default_factory=list)
    by_model: dict = field(default_factory=dict)  # {"app_label.Model": rows removed}, for callers and tests
    unlinked: list = field(default_factory=list)
    refusals: list = field(default_factory=list)

    @property
    def total(self):
        return sum(count for _, count in self.rows)


def _label(model, count):
    meta = model._meta
    name = meta.verbose_name if count == 1 else meta.verbose_name_plural
    return str(name)


def _surveys_of(target):
    if isinstance(target, Survey):
        return Survey.objects.filter(pk=target.pk)
    return Survey.objects.filter(dataset=target)


def paid_study_refusals(surveys):
    """Why these surveys' paid studies are still live (sentences), or [] when none is."""
    reasons = []
    for study in ProlificStudy.objects.filter(survey__in=surveys).exclude(study_id="").select_related("survey"):
        if study.status not in PROLIFIC_NOT_LIVE:
            state = study.status.lower() or "published"
            reasons.append(
                f"Survey {study.survey.name}'s Prolific study {study.study_id} is {state}: "
                "stop it on the survey's Prolific page (and review its submissions) first."
            )
    awaiting = (
        ProlificSubmission.objects.filter(study__survey__in=surveys, status=PROLIFIC_AWAITING)
        .values("study__survey__name")
        .order_by("study__survey__name")
    )
    counts = defaultdict(int)
    for row in awaiting:
        counts[row["study__survey__name"]] += 1
    for name, count in counts.items():
        reasons.append(
            f"Survey {name} has {count} Prolific submission{'s' if count != 1 else ''} awaiting your review: "
            "approve or reject them first, so the participants are paid or told."
        )
    now = timezone.now()
    open_hits = (
        MTurkHIT.objects.filter(hit__survey__in=surveys, sandbox=False)
        .exclude(status__in=MTURK_GONE)
        .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now))
    )
    for name in sorted(set(open_hits.values_list("hit__survey__name", flat=True))):
        reasons.append(
            f"Survey {name} has MTurk HITs that workers can still accept: close the survey (it expires them) first."
        )
    submitted = MTurkAssignment.objects.filter(
        mturk_hit__hit__survey__in=surveys, mturk_hit__sandbox=False, status="Submitted"
    )
    for name in sorted(set(submitted.values_list("mturk_hit__hit__survey__name", flat=True))):
        reasons.append(
            f"Survey {name} has MTurk assignments submitted and not yet approved or rejected: review them first."
        )
    return reasons


def _collect(target):
    collector = Collector(using=router.db_for_write(type(target), instance=target))
    collector.collect([target])
    return collector


def _counts(collector):
    """{model: rows the delete removes}: the collector reaches a row by every path that cascades to it
    (a rating through its survey, its response and its assignment), so each table's rows are counted
    once, as the union of what every path reaches."""
    reached = defaultdict(list)
    for model, instances in collector.data.items():
        reached[model].append(Q(pk__in=[obj.pk for obj in instances]))
    for queryset in collector.fast_deletes:
        reached[queryset.model].append(Q(pk__in=queryset.values("pk")))
    return {model: model._base_manager.filter(reduce(or_, conditions)).count() for model, conditions in reached.items()}


def _unlinked(collector):
    """[(label, count)] of rows kept but unlinked (their nullable link set to NULL)."""
    counts = defaultdict(int)
    for (field_, _value), objects in collector.field_updates.items():
        model = field_.model
        for group in objects:
            counts[model] += group.count() if hasattr(group, "count") and not isinstance(group, list) else len(group)
    return [(_label(model, n), n) for model, n in counts.items() if n]


def _foreign_rows(collector, owner_id):
    """Rows of another owner the cascade would reach (their model's label and count)."""
    found = defaultdict(int)
    for model, instances in collector.data.items():
        if any(f.name == "owner" for f in model._meta.concrete_fields):
            others = [obj for obj in instances if getattr(obj, "owner_id", owner_id) not in (owner_id, None)]
            if others:
                found[model] += len(others)
    return [f"{n} {_label(model, n)} of another researcher" for model, n in found.items()]


def deletion_plan(*, target):
    """What deleting `target` (a Dataset or a Survey) removes and keeps, and why it may not go now."""
    plan = DeletionPlan(target=target)
    try:
        collector = _collect(target)
    except (ProtectedError, RestrictedError) as error:
        kept = defaultdict(int)
        for obj in error.protected_objects if isinstance(error, ProtectedError) else error.restricted_objects:
            kept[type(obj)] += 1
        listed = ", ".join(f"{n} {_label(model, n)}" for model, n in kept.items())
        plan.refusals.append(f"It would delete payment records ({listed}), which are kept for the accounts.")
        return plan
    counts = _counts(collector)
    own = type(target)
    plan.rows = sorted(
        ((model, n) for model, n in counts.items() if n),
        key=lambda item: (item[0] is not own, -item[1], item[0]._meta.label),
    )
    plan.by_model = {model._meta.label: n for model, n in plan.rows}
    plan.rows = [(_label(model, n), n) for model, n in plan.rows]
    plan.unlinked = _unlinked(collector)
    foreign = _foreign_rows(collector, target.owner_id)
    if foreign:
        plan.refusals.append(f"It would also delete {', '.join(foreign)}: only they can delete those.")
    plan.refusals.extend(paid_study_refusals(_surveys_of(target)))
    plan.refusals.extend(deletion_guard_reasons(target))
    return plan


def _delete(target, model):
    with transaction.atomic():
        # Locked (PostgreSQL) against a launch, a publish or a second delete meanwhile; the plan is
        # made again under the lock, so what is refused or counted is what holds at the delete.
        locked = model.objects.select_for_update().filter(pk=target.pk).first()
        if locked is None:
            raise DeletionRefused(f"{model._meta.verbose_name.capitalize()} {target} was deleted already.")
        plan = deletion_plan(target=locked)
        if plan.refusals:
            raise DeletionRefused(" ".join(plan.refusals))
        locked.delete()
    return plan


def dataset_delete(*, dataset):
    """Delete the dataset with everything that cascades from it (surveys, ratings, scores, runs,
    reports); refuse (DeletionRefused, nothing deleted) as the module says. Returns the plan carried out."""
    return _delete(dataset, Dataset)


def survey_delete(*, survey):
    """Delete the survey with its HITs, answers, quality rows and reports; the dataset stays.
    Refuse (DeletionRefused, nothing deleted) as the module says. Returns the plan carried out."""
    return _delete(survey, Survey)
