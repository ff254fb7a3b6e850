"""python manage.py judge_remove --name N [--owner USERNAME]"""

from django.core.management.base import BaseCommand, CommandError

from scoring.management.judge_cli import add_judge_owner_argument, judge_owner
from scoring.services.judges.registry import JudgeRefusal, judge_named
from scoring.services.judges.remove import judge_delete


class Command(BaseCommand):
    help = (
        "Remove an LLM judge with its cached replies, its usage and its judge:NAME scores; refused while a "
        "metrics run or a judging of pairs uses it."
    )

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True)
        add_judge_owner_argument(parser)

    def handle(self, *args, **options):
        try:
            judge = judge_named(options["name"], owner=judge_owner(options["owner"]))
            scores = judge_delete(judge=judge)  # JudgeBusy (a JudgeRefusal) while a job uses it
        except JudgeRefusal as refusal:
            raise CommandError(str(refusal)) from None
        self.stdout.write(f"judge {options['name']!r} removed, with its {scores} {judge.metric_name} score(s)")
