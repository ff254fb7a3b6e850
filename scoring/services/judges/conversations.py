"""LLM judges on a dataset's conversations, launched from the judge's page: each system turn with
the conversation so far, each whole conversation once per aspect, or both (issue 37; the work is
scoring.services.metrics.conversations', as the compute_conversation_metrics command does it).

A judging is queued (marked on its usage row, so the judge's page shows it waiting and a removal
of the judge knows of it) and runs on a worker: a dataset's conversations take minutes of requests.
However it ends, it is no longer queued; a failure keeps why on the row until a judging succeeds
(the compute functions mark it done),
and as every answer is cached as it arrives, judging again asks only for what is missing.
"""


from scoring.judges import prompts
from scoring.services.judges.judging import JUDGE_METRIC_PREFIX
from scoring.services.judges.queued import judging_queue, judging_recorded
from scoring.services.judges.registry import JudgeRefusal, judge_settings
from scoring.services.metrics import conversations as compute
from scoring.services.metrics.conversations import conversations_label

JUDGE_CONVERSATIONS_TASK = "scoring.tasks.judge_dataset_conversations"  # by name: services import no tasks
LEVELS = ("conversation", "turn", "both")


def conversation_judging_check(judge, dataset, level):
    """Refuse (JudgeRefusal, saying why) before anything is queued: an unknown level, a pairwise
    judge, another researcher's judge or dataset, a missing key, a dataset without conversations."""
    if level not in LEVELS:
        raise JudgeRefusal(f"unknown level {level!r}; choose one of {', '.join(LEVELS)}")
    if prompts.get_template(judge.template).kind != prompts.RATING:
        raise JudgeRefusal(f"judge {judge.name!r} judges pairs ({judge.template}); conversations need a rating judge")
    if judge.owner_id != dataset.owner_id:
        raise JudgeRefusal(f"judge {judge.name!r} and dataset {dataset.name!r} belong to different researchers")
    judge_settings(judge)
    if not dataset.conversations.exists():
        raise JudgeRefusal(f"dataset {dataset.name!r} holds no conversations")


def conversation_judging_queue(*, judge, dataset, level):
    """Check, mark the judging queued on its usage row and queue the task once this commits."""
    conversation_judging_check(judge, dataset, level)
    judging_queue(judge=judge, label=conversations_label(dataset), task_name=JUDGE_CONVERSATIONS_TASK,
                  args=(judge.pk, dataset.pk, level))  # fmt: skip


def judge_dataset_conversations(*, judge, dataset, level):
    """Judge the dataset's conversations at `level` and store the scores; returns the counts."""
    label = conversations_label(dataset)
    metric = JUDGE_METRIC_PREFIX + judge.name
    done = {}
    # A ValueError is the compute's own refusal in words meant for the researcher (a too long name).
    with judging_recorded(judge=judge, label=label, told=(ValueError,)):
        conversation_judging_check(judge, dataset, level)
        if level in ("conversation", "both"):
            done["conversations"] = compute.conversation_judge_compute(dataset=dataset, metric=metric)
        if level in ("turn", "both"):
            done["turns"] = compute.turn_judge_compute(dataset=dataset, metric=metric)
    return done
