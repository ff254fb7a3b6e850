"""python manage.py judge_list [--owner USERNAME]"""

from django.core.management.base import BaseCommand

from scoring.management.judge_cli import add_judge_owner_argument, judge_owner
from scoring.selectors.judges import judges_visible_to


class Command(BaseCommand):
    help = "List a researcher's LLM judges (the API key variable's name, never its value)."

    def add_arguments(self, parser):
        add_judge_owner_argument(parser)

    def handle(self, *args, **options):
        judges = judges_visible_to(user=judge_owner(options["owner"]))
        if not judges:
            self.stdout.write("no judges yet: add one with judge_add")
        for judge in judges:
            key = f"key from ${judge.api_key_env}" if judge.api_key_env else "no key"
            self.stdout.write(
                f"{judge.metric_name}\t{judge.template}\t{judge.model} at {judge.base_url}\t{key}\t"
                f"samples={judge.samples} concurrency={judge.concurrency}"
            )
