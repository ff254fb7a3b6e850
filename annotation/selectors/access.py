"""Who may read and change which datasets and surveys, and how pages name their workers.

Everything a researcher sees is filtered by owner here.
"""

from django.db.models import Count, IntegerField, OuterRef, Subquery
from django.db.models.functions import Coalesce

from annotation.models import Conversation, Dataset, Survey
from annotation.selectors.pseudonyms import WorkerNames

# Reading every study stays a staff right (admins read reports); changing one needs ownership, a
# superuser, or this explicit permission. `is_staff` alone never grants a write.
MANAGE_ANY_STUDY = "annotation.manage_any_study"


def may_change_any_study(user):
    """Whether the user may change every researcher's datasets and surveys (not only their own)."""
    return user.is_active and (user.is_superuser or user.has_perm(MANAGE_ANY_STUDY))


def _may_read_any_study(user):
    return (user.is_active and user.is_staff) or may_change_any_study(user)


def datasets_visible_to(*, user):
    """Datasets a user may read: their own; staff (and those who may change any) read all."""
    # The conversations counted in a subquery: a second counted join would multiply the rows of a
    # dataset holding both contexts and conversations.
    conversations = (
        Conversation.objects.filter(dataset=OuterRef("pk")).order_by().values("dataset").annotate(n=Count("pk"))
    )
    queryset = Dataset.objects.annotate(
        n_contexts=Count("contexts", distinct=True),
        n_conversations=Coalesce(Subquery(conversations.values("n"), output_field=IntegerField()), 0),
    )
    if _may_read_any_study(user):
        return queryset
    return queryset.filter(owner=user)


def datasets_changeable_by(*, user):
    """Datasets a user may change (upload into, survey, score, train on): their own, or all with the right."""
    if may_change_any_study(user):
        return Dataset.objects.all()
    return Dataset.objects.filter(owner=user)


def surveys_visible_to(*, user):
    """Surveys a user may read: their own; staff (and those who may change any) read all."""
    queryset = Survey.objects.select_related("dataset")
    if _may_read_any_study(user):
        return queryset
    return queryset.filter(owner=user)


def surveys_changeable_by(*, user):
    """Surveys a user may change (launch, close, review, override, MTurk actions): their own, or all with the right."""
    queryset = Survey.objects.select_related("dataset")
    if may_change_any_study(user):
        return queryset
    return queryset.filter(owner=user)


def may_see_real_worker_ids(*, user, study):
    """Only a study's owner downloads its workers' real ids (staff and admins get pseudonyms):
    the ids are personal data collected for that researcher's study."""
    return study.owner_id is not None and study.owner_id == user.pk


def worker_names(*, user, study):
    """How researcher pages name the workers of `study` (a dataset or a survey) for `user`: their
    real ids for the study's owner only, as downloads do (`may_see_real_worker_ids`); the dataset's
    pseudonyms (A1, A2, ...) for everyone else who may read it (staff, admins). Every page naming a
    worker goes through this (`{{ annotator|worker_name:worker_names }}`, annotation/templatetags)."""
    if may_see_real_worker_ids(user=user, study=study):
        return WorkerNames()
    return WorkerNames(dataset=study if isinstance(study, Dataset) else study.dataset)


def may_change_study(*, user, study):
    """Whether the user may change this dataset or survey (the check for one object already read)."""
    return study.owner_id == user.pk or may_change_any_study(user)
