"""annotation's steps of the pipeline bar: Upload, Surveys, Quality.

scoring (Metrics, ADEM) and analysis (Report) add theirs through `annotation.services.extensions.points`.
The bar is on every dataset page: each provider spends one or two queries at most.
"""

from django.db.models import Count, OuterRef, Subquery
from django.db.models.fields.json import KeyTextTransform
from django.urls import reverse

from annotation.models import Context, Conversation, Dataset, Survey, System
from annotation.services.extensions.points import PipelineStep, pipeline_steps


def plural(count, singular, plural_form=None):
    """'1 survey', '3 surveys' (the bar's phrases are built in Python, not in templates)."""
    return f"{count} {singular if count == 1 else plural_form or singular + 's'}"


def _upload_step(dataset):
    # One query for both counts (correlated subqueries: a join of contexts and systems would multiply).
    counts = (
        Dataset.objects.filter(pk=dataset.pk)
        .annotate(
            n_contexts=Subquery(_count(Context.objects.filter(dataset=OuterRef("pk")))),
            n_systems=Subquery(_count(System.objects.filter(dataset=OuterRef("pk")))),
            n_conversations=Subquery(_count(Conversation.objects.filter(dataset=OuterRef("pk")))),
        )
        .values("n_contexts", "n_systems", "n_conversations")
        .get()
    )
    n_contexts, n_systems = counts["n_contexts"] or 0, counts["n_systems"] or 0
    n_conversations = counts["n_conversations"] or 0
    # A dataset of conversations only says so, not "0 contexts" (issue 37); one of both names both.
    held = [plural(n_contexts, "context")] if n_contexts or not n_conversations else []
    held += [plural(n_conversations, "conversation")] if n_conversations else []
    return PipelineStep(
        key="upload",
        label="Upload",
        url=reverse("annotation:dataset_detail", args=[dataset.pk]),
        state=", ".join([*held, plural(n_systems, "system")]),
        done=n_contexts > 0 or n_conversations > 0,
        order=10,
    )


def _count(queryset):
    return queryset.order_by().values("dataset").annotate(n=Count("pk")).values("n")[:1]


def _surveys_step(dataset, surveys):
    if not surveys:
        return PipelineStep(
            key="surveys",
            label="Surveys",
            url=reverse("annotation:survey_new") + f"?dataset={dataset.pk}",
            state="no surveys yet: create one",
            done=False,
            order=20,
        )
    if all(survey["status"] == Survey.Status.DRAFT for survey in surveys):
        # Drafts collect nothing: launching one is the next step, not checking quality.
        return PipelineStep(
            key="surveys",
            label="Surveys",
            url=reverse("annotation:survey_detail", args=[surveys[-1]["pk"]]),
            state=f"{plural(len(surveys), 'draft')}, none launched: launch one",
            done=False,
            order=20,
        )
    live = sum(1 for survey in surveys if survey["status"] == Survey.Status.LIVE)
    return PipelineStep(
        key="surveys",
        label="Surveys",
        url=reverse("annotation:dataset_detail", args=[dataset.pk]) + "#surveys",
        state=f"{plural(len(surveys), 'survey')}, {live} live",
        done=True,
        order=20,
    )


def _quality_step(dataset, surveys):
    if len(surveys) == 1:
        url = reverse("annotation:quality_survey", args=[surveys[0]["pk"]])
    else:  # this dataset's surveys, not every survey of the user
        url = reverse("annotation:quality_index") + f"?dataset={dataset.pk}"
    reports = [survey for survey in surveys if survey["quality_report__computed_at"]]
    if not reports:
        state = "not checked yet" if surveys else "needs ratings first"
        return PipelineStep(key="quality", label="Quality", url=url, state=state, done=False, order=30)
    excluded = sum(int(survey["n_excluded"] or 0) for survey in reports)
    return PipelineStep(
        key="quality",
        label="Quality",
        url=url,
        state=f"{plural(len(reports), 'survey')} checked, {plural(excluded, 'annotator')} excluded",
        done=True,
        order=30,
    )


def annotation_steps(dataset, user):
    """Pipeline-step provider for Upload, Surveys and Quality (registered in AnnotationConfig.ready)."""
    # The bar counts the surveys this user may see, as the pages it links to do; one query for
    # both steps (the bar sits on pages whose query budget is tested).
    surveys = Survey.objects.filter(dataset=dataset)
    if not user.is_staff:
        surveys = surveys.filter(owner=user)
    # Only the excluded count out of the quality report's data: the whole of it (every annotator
    # pair) ran to megabytes on a large study, decoded on every page that shows the bar.
    excluded = KeyTextTransform("n_excluded", "quality_report__data")
    rows = list(surveys.order_by("pk").values("pk", "status", "quality_report__computed_at", n_excluded=excluded))
    return [_upload_step(dataset), _surveys_step(dataset, rows), _quality_step(dataset, rows)]


def pipeline_for(dataset, user, current=None):
    """The bar's context: the steps, which one this page is, and the first step still to do."""
    steps = pipeline_steps(dataset, user)
    next_key = next((step.key for step in steps if not step.done), None)
    return {"steps": steps, "current": current, "next_key": next_key, "dataset": dataset}
