"""LLM judges on a pairwise study: judge a dataset's human-judged pairs in both orders, and read
back, from the judge cache alone, how each judge agrees with the humans.

The pairs are the accepted pairwise judgements of the dataset (`annotation.kinds.pairwise.selectors.
judged_pairs`), one PairItem per human judgement, its winner the human's choice. Judging stores
every answer in the judge cache (keyed by judge, template version and prompt), so the report
reads the verdicts without a request, and judging again asks only for what is missing.
"""


from annotation.kinds.pairwise.selectors import judged_pairs
from scoring.judges import pairwise, prompts
from scoring.models import Judge, JudgeCacheEntry
from scoring.services.judges.judging import judge_pairs, majority_pick
from scoring.services.judges.queued import judging_queue, judging_recorded
from scoring.services.judges.registry import JudgeRefusal, judge_settings

JUDGE_PAIRS_TASK = "scoring.tasks.judge_dataset_pairs"  # by name: services do not import the tasks module

WINNER = {"a": "A", "b": "B", "tie": pairwise.TIE}


def pair_items(rows):
    """One PairItem per row of `judged_pairs`, its human winner the judgement's choice."""
    return [
        pairwise.PairItem(list(row["context"]), row["response_a"], row["response_b"], WINNER.get(row["winner"]))
        for row in rows
    ]


def dataset_pair_items(dataset):
    """One PairItem per accepted human pairwise judgement of `dataset` (exclusions applied)."""
    return pair_items(judged_pairs(dataset=dataset))


def pairwise_judge_check(judge, dataset):
    """Refuse (JudgeRefusal, saying why) before anything is queued: a rating judge, a judge or a
    dataset of another researcher, a missing API key, or a dataset without pairwise judgements."""
    if prompts.get_template(judge.template).kind != prompts.PAIRWISE:
        raise JudgeRefusal(f"judge {judge.name!r} rates single responses ({judge.template}); add a pairwise judge")
    if judge.owner_id != dataset.owner_id:
        raise JudgeRefusal(f"judge {judge.name!r} and dataset {dataset.name!r} belong to different researchers")
    judge_settings(judge)
    if not judged_pairs(dataset=dataset):
        raise JudgeRefusal(f"dataset {dataset.name!r} has no accepted pairwise judgements to compare with")


def pairs_label(dataset):
    """The label of a dataset's judging of pairs on the judge's usage rows."""
    return f"pairs of {dataset.name}"[:200]


def judge_pairs_queue(*, judge, dataset):
    """Check (JudgeRefusal, nothing queued), mark the judging queued on its usage row, and queue the
    task once this commits. The mark is what tells a removal of the judge that a judging is waiting
    in the broker; the judging clears it when it ends."""
    pairwise_judge_check(judge, dataset)
    judging_queue(judge=judge, label=pairs_label(dataset), task_name=JUDGE_PAIRS_TASK, args=(judge.pk, dataset.pk))


def judge_dataset_pairs(*, judge, dataset):
    """Judge the dataset's human-judged pairs with `judge` in both orders; returns the statistics.
    However it ends (a refusal, a failed request), the judging is no longer queued; when it fails,
    why is kept on its usage row (figures["error"]) for the judge's page, until a judging succeeds."""
    label = pairs_label(dataset)
    with judging_recorded(judge=judge, label=label):
        pairwise_judge_check(judge, dataset)
        _, stats = judge_pairs(judge=judge, items=dataset_pair_items(dataset), label=label)
    return stats


def cached_judge_verdicts(*, dataset, pairs=None):
    """`[(judge, [(PairItem, its judged_pairs row or None, PairVerdict)])]` for each of the dataset
    owner's pairwise judges with both orders of some of the pairs in its cache (no request is
    made). `pairs`: a callable returning the `judged_pairs` rows (the report's filters), called
    only when the owner has a pairwise judge; by default every accepted judgement."""
    judges = list(Judge.objects.filter(owner_id=dataset.owner_id, template=prompts.PAIRWISE).order_by("name"))
    if not judges:
        return []
    rows = judged_pairs(dataset=dataset) if pairs is None else pairs()
    items = pair_items(rows)
    template = prompts.get_template(prompts.PAIRWISE)
    hashes = [
        [prompts.prompt_hash(messages) for messages in pairwise.both_orders_messages(template, item)] for item in items
    ]
    wanted = {h for pair in hashes for h in pair}
    found = []
    for judge in judges:
        entries = JudgeCacheEntry.objects.filter(
            judge=judge, template_version=template.key, prompt_hash__in=wanted
        ).values_list("prompt_hash", "values")
        picks = {prompt_hash: majority_pick(values) for prompt_hash, values in entries}
        judged = [
            (item, row, pairwise.verdict_from_picks(picks[a_first], picks[b_first]))
            for item, row, (a_first, b_first) in zip(items, rows, hashes, strict=True)
            if a_first in picks and b_first in picks
        ]
        if judged:
            found.append((judge, judged))
    return found


def cached_judge_statistics(*, dataset, pairs=None):
    """For each of the dataset owner's pairwise judges that has judged some of its pairs (both
    orders in the cache): `{judge, agreement, n_pairs, position_bias, self_consistency,
    n_with_human_winner, unreadable_verdicts}`. No request is made; pairs not judged yet are left out.
    `pairs`: a callable returning the `judged_pairs` rows to use (the report's filters), called only
    when the owner has a pairwise judge; by default every accepted judgement."""
    table = []
    for judge, judged in cached_judge_verdicts(dataset=dataset, pairs=pairs):
        stats = pairwise.pairwise_statistics([item for item, _row, _verdict in judged], [v for *_, v in judged])
        table.append(
            {
                "judge": judge.name,
                "agreement": stats["agreement_with_humans"],
                "n_pairs": stats["n_pairs"],
                "position_bias": stats["position_bias"],
                "self_consistency": stats["self_consistency"],
                "n_with_human_winner": stats["n_with_human_winner"],
                "unreadable_verdicts": stats["unreadable_verdicts"],
            }
        )
    return table
