"""A judging run on a worker from the judge's page (pairs, conversations): queued on its usage row,
and however it ends no longer queued, a failure's reason kept on that row for the judge's page.

The mark is what tells the judge's page that a judging waits in the broker, and a removal of the
judge that it must wait; the judging clears it when it ends, whatever happens."""

from contextlib import contextmanager

from celery import current_app
from django.db import transaction
from django.utils import timezone

from scoring.judges.client import JudgeRequestFailed
from scoring.models import Judge, JudgeUsage
from scoring.services.judges.judging import judge_usage_row
from scoring.services.judges.registry import JudgeRefusal

INTERNAL = "an internal error (the worker's log has it)"  # a traceback is for the log, not the page


def judging_queue(*, judge, label, task_name, args):
    """Mark the judging labelled `label` queued and queue `task_name(*args)` once this commits."""
    with transaction.atomic():
        usage = judge_usage_row(judge, None, label)
        JudgeUsage.objects.filter(pk=usage.pk).update(queued_at=timezone.now())
        transaction.on_commit(lambda: current_app.tasks[task_name].delay(*args))


@contextmanager
def judging_recorded(*, judge, label, told=()):
    """Around a judging: its refusals and failed requests (and the `told` errors) are kept on its
    usage row in their own words, anything else as an internal error; it is unmarked at the end."""
    try:
        yield
    except (JudgeRefusal, JudgeRequestFailed, *told) as error:
        judging_failed(judge, label, str(error))
        raise
    except Exception:
        judging_failed(judge, label, INTERNAL)
        raise
    finally:
        JudgeUsage.objects.filter(judge_id=judge.pk, run=None, label=label).update(queued_at=None)


def judging_failed(judge, label, reason):
    """Keep why a judging labelled `label` failed on its usage row (figures["error"]), for the judge's page."""
    if not Judge.objects.filter(pk=judge.pk).exists():  # removed meanwhile: no row to mark
        return
    usage = judge_usage_row(judge, None, label)
    figures = {key: value for key, value in (usage.figures or {}).items() if key not in ("error", "failed_at")}
    figures.update(error=reason[:2000], failed_at=timezone.now().isoformat())
    JudgeUsage.objects.filter(pk=usage.pk).update(figures=figures)
