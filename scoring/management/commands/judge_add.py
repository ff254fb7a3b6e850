"""python manage.py judge_add --name N --base-url URL --model M [--api-key-env VAR]
[--template rating|rating-with-reference|pairwise] [--samples K] [--concurrency C] ..."""

from django.core.management.base import BaseCommand, CommandError

from scoring.judges.prompts import TEMPLATES
from scoring.management.judge_cli import add_judge_owner_argument, judge_owner
from scoring.services.judges.registry import JudgeRefusal, judge_create_or_refuse


class Command(BaseCommand):
    help = "Register an LLM judge (an OpenAI-compatible endpoint); its scores become the metric judge:NAME."

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True)
        parser.add_argument(
            "--base-url", required=True, help="e.g. http://127.0.0.1:8000/v1 (vLLM), .../11434/v1 (Ollama)"
        )
        parser.add_argument("--model", required=True)
        parser.add_argument(
            "--api-key-env", default="", help="Name of the environment variable holding the key (never the key)."
        )
        parser.add_argument("--template", default="rating", choices=list(TEMPLATES))
        parser.add_argument("--samples", type=int, default=1, help="Requests per prompt; the scores are averaged.")
        parser.add_argument("--concurrency", type=int, default=8, help="Requests in flight at once.")
        parser.add_argument("--temperature", type=float, default=0.0)
        parser.add_argument("--max-tokens", type=int, default=16)
        parser.add_argument("--price-prompt", type=float, default=None, help="Price per million prompt tokens.")
        parser.add_argument("--price-completion", type=float, default=None, help="Price per million completion tokens.")
        add_judge_owner_argument(parser)

    def handle(self, *args, **options):
        owner = judge_owner(options["owner"])
        if options["api_key_env"].startswith(("sk-", "Bearer ")):
            raise CommandError("--api-key-env takes the NAME of an environment variable, not the key itself")
        try:
            judge = judge_create_or_refuse(
                owner=owner,
                name=options["name"],
                base_url=options["base_url"],
                model=options["model"],
                api_key_env=options["api_key_env"],
                template=options["template"],
                samples=options["samples"],
                concurrency=options["concurrency"],
                temperature=options["temperature"],
                max_tokens=options["max_tokens"],
                price_per_million_prompt_tokens=_price(options["price_prompt"]),
                price_per_million_completion_tokens=_price(options["price_completion"]),
            )
        except JudgeRefusal as refusal:
            raise CommandError(str(refusal)) from None
        self.stdout.write(f"judge {judge.name!r} added for {owner.username}: metric {judge.metric_name}")


def _price(value):
    return None if value is None else f"{value:.4f}"
