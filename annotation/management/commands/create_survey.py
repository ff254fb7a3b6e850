import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from annotation import services
from annotation.management.cli import dataset_or_error


class Command(BaseCommand):
    help = "Create a rating survey over a dataset, launch it, and print the annotators' link."

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True, help="Dataset name.")
        parser.add_argument("--name", required=True, help="Survey name (unique).")
        parser.add_argument("--contexts-per-hit", type=int, default=5)
        parser.add_argument("--assignments", type=int, default=3, help="Distinct annotators per HIT.")
        parser.add_argument("--attention-checks", type=int, default=1, help="Attention checks per HIT.")
        parser.add_argument("--overlap", type=int, default=0, help="Contexts every annotator rates.")
        parser.add_argument("--max-hits", type=int, default=10, help="HITs per annotator at most.")
        parser.add_argument("--provider", default="local", choices=["local", "mturk"])
        parser.add_argument("--systems", default="", help="Comma-separated system names (default: all).")
        parser.add_argument("--aspects", default="", help="Extra scales beside overall, comma-separated.")
        parser.add_argument("--policy", default="flag", choices=["flag", "exclude", "reject"])
        parser.add_argument(
            "--gold",
            default="",
            help='JSONL of gold checks: {"context": [turns], "response": "...", "accepted_scores": [4, 5]} per line.',
        )
        parser.add_argument(
            "--owner",
            default="",
            help="Username of the dataset's owner, needed when several researchers have a dataset of that name; "
            "also owns the survey (default: the dataset's owner).",
        )
        parser.add_argument("--draft", action="store_true", help="Create without launching.")
        parser.add_argument("--base-url", default="", help="Public address for the link (default PUBLIC_BASE_URL).")

    def handle(self, **options):
        dataset = dataset_or_error(options["dataset"], options["owner"])
        owner = dataset.owner
        gold = self._gold(options["gold"]) if options["gold"] else []
        try:
            survey = services.survey_create(
                dataset=dataset,
                name=options["name"],
                owner=owner,
                systems=[s.strip() for s in options["systems"].split(",") if s.strip()],
                aspects=[a.strip() for a in options["aspects"].split(",") if a.strip()],
                contexts_per_hit=options["contexts_per_hit"],
                assignments_per_hit=options["assignments"],
                attention_checks_per_hit=options["attention_checks"],
                overlap_contexts=options["overlap"],
                max_hits_per_annotator=options["max_hits"],
                provider=options["provider"],
                attention_policy=options["policy"],
                gold_checks=gold,
            )
            if not options["draft"]:
                survey = services.survey_launch(survey=survey)
        except (services.SurveyError, services.HITLayoutError, KeyError) as error:
            raise CommandError(str(error)) from None
        base = (options["base_url"] or settings.PUBLIC_BASE_URL or "http://127.0.0.1:8000").rstrip("/")
        self.stderr.write(f"Survey {survey.name!r}: {survey.hits.count()} HITs, status {survey.status}.")
        self.stdout.write(f"{base}/s/{survey.token}/")

    def _gold(self, path):
        checks = []
        try:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
        except OSError as error:
            raise CommandError(f"Cannot read {path}: {error}") from None
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                checks.append(
                    {
                        "turns": record.get("context", []),
                        "response_text": record["response"],
                        "accepted_scores": record["accepted_scores"],
                    }
                )
            except (ValueError, KeyError, AttributeError) as error:
                raise CommandError(f"{path} line {number}: {error!r}") from None
        return checks
