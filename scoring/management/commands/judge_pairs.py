"""python manage.py judge_pairs --judge N (--pairs FILE.jsonl | --dataset D) [--owner USERNAME]

--dataset judges the dataset's accepted human pairwise judgements (a pairwise study); the results
stay in the judge cache, and the report's pairwise section shows them.
--pairs: each line: {"context": ["turn", ...], "reply_a": "...", "reply_b": "...", "human_winner": "A"|"B"|"tie"|null}.
"""

import json

from django.core.management.base import BaseCommand, CommandError

from annotation.management.cli import dataset_or_error
from scoring.judges.client import JudgeRequestFailed
from scoring.judges.pairwise import PairItem
from scoring.management.judge_cli import add_judge_owner_argument, judge_owner
from scoring.services.judges.judging import judge_pairs
from scoring.services.judges.pairwise import judge_dataset_pairs
from scoring.services.judges.registry import JudgeRefusal, judge_named

WINNERS = ("A", "B", "tie", None)


class Command(BaseCommand):
    help = "Judge pairs of replies in both orders; print agreement with human winners, position bias, self-consistency."

    def add_arguments(self, parser):
        parser.add_argument("--judge", required=True, help="A judge added with --template pairwise.")
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--pairs", help="JSONL file of pairs.")
        source.add_argument("--dataset", help="A dataset's human-judged pairs (its pairwise studies).")
        add_judge_owner_argument(parser)

    def handle(self, *args, **options):
        items = read_pairs(options["pairs"]) if options["pairs"] else None
        dataset = dataset_or_error(options["dataset"], options["owner"]) if options["dataset"] else None
        try:
            owner = dataset.owner if dataset is not None and not options["owner"] else judge_owner(options["owner"])
            judge = judge_named(options["judge"], owner=owner)
            if dataset is not None:
                stats = judge_dataset_pairs(judge=judge, dataset=dataset)
            else:
                _, stats = judge_pairs(judge=judge, items=items, label=f"pairs from {options['pairs']}"[:200])
        except (JudgeRefusal, JudgeRequestFailed) as error:
            raise CommandError(str(error)) from None
        for key, value in stats.items():
            self.stdout.write(f"{key}\t{'—' if value is None else round(value, 4)}")


def read_pairs(path):
    """PairItem objects from a JSONL file; the first bad line is a CommandError naming it."""
    items = []
    try:
        with open(path, encoding="utf-8") as lines:
            for number, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                    context = row.get("context") or []
                    if isinstance(context, str):
                        context = [context]
                    winner = row.get("human_winner")
                    if winner not in WINNERS:
                        raise ValueError(f"human_winner must be A, B, tie or null, not {winner!r}")
                    items.append(PairItem(list(context), str(row["reply_a"]), str(row["reply_b"]), winner))
                except (ValueError, KeyError, AttributeError) as error:
                    raise CommandError(f"{path}, line {number}: {error!s}") from None
    except OSError as error:
        raise CommandError(f"cannot read {path}: {error.strerror}") from None
    if not items:
        raise CommandError(f"{path} holds no pairs")
    return items
