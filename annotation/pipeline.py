"""annotation's steps of the pipeline bar: Upload, Surveys, Quality.

scoring (Metrics, ADEM) and analysis (Report) add theirs through `annotation.extensions`.
Each step costs a query or two: the bar is on every dataset page.
"""

from django.db.models import Count, Q
from django.urls import reverse

from annotation.extensions import PipelineStep, pipeline_steps
from annotation.models import Survey
from annotation.models.quality import QualityReport


def plural(count, singular, plural_form=None):
    """'1 survey', '3 surveys' (the bar's phrases are built in Python, not in templates)."""
    return f"{count} {singular if count == 1 else plural_form or singular + 's'}"


def _upload_step(dataset):
    n_systems = dataset.systems.count()
    n_contexts = dataset.contexts.count()
    return PipelineStep(
        key="upload",
        label="Upload",
        url=reverse("annotation:dataset_detail", args=[dataset.pk]),
        state=f"{plural(n_contexts, 'context')}, {plural(n_systems, 'system')}",
        done=n_contexts > 0,
        order=10,
    )


def _surveys_step(dataset, surveys):
    counts = surveys.aggregate(total=Count("pk"), live=Count("pk", filter=Q(status=Survey.Status.LIVE)))
    if not counts["total"]:
        return PipelineStep(
            key="surveys",
            label="Surveys",
            url=reverse("annotation:survey_new") + f"?dataset={dataset.pk}",
            state="no surveys yet: create one",
            done=False,
            order=20,
        )
    return PipelineStep(
        key="surveys",
        label="Surveys",
        url=reverse("annotation:dataset_detail", args=[dataset.pk]) + "#surveys",
        state=f"{plural(counts['total'], 'survey')}, {counts['live']} live",
        done=True,
        order=20,
    )


def _quality_step(surveys):
    reports = list(QualityReport.objects.filter(survey__in=surveys).values_list("survey_id", "data"))
    survey_ids = list(surveys.values_list("pk", flat=True))
    if len(survey_ids) == 1:
        url = reverse("annotation:quality_survey", args=[survey_ids[0]])
    else:
        url = reverse("annotation:quality_index")
    if not reports:
        state = "not checked yet" if survey_ids else "needs ratings first"
        return PipelineStep(key="quality", label="Quality", url=url, state=state, done=False, order=30)
    excluded = sum((data or {}).get("n_excluded") or 0 for _, data in reports)
    checked = plural(len(reports), "survey")
    return PipelineStep(
        key="quality",
        label="Quality",
        url=url,
        state=f"{checked} checked, {plural(excluded, 'annotator')} excluded",
        done=True,
        order=30,
    )


def annotation_steps(dataset, user):
    """Pipeline-step provider for Upload, Surveys and Quality (registered in AnnotationConfig.ready)."""
    # The bar counts the surveys this user may see, as the pages it links to do.
    surveys = Survey.objects.filter(dataset=dataset)
    if not user.is_staff:
        surveys = surveys.filter(owner=user)
    return [_upload_step(dataset), _surveys_step(dataset, surveys), _quality_step(surveys)]


def pipeline_for(dataset, user, current=None):
    """The bar's context: the steps, which one this page is, and the first step still to do."""
    steps = pipeline_steps(dataset, user)
    next_key = next((step.key for step in steps if not step.done), None)
    return {"steps": steps, "current": current, "next_key": next_key, "dataset": dataset}
