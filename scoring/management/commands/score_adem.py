"""Score a JSONL file of {context, reference, response} with a registered ADEM model."""

import json
import sys

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from scoring.services.adem.refusals import AdemRefusal
from scoring.services.adem.scoring import adem_model_named, adem_score


class Command(BaseCommand):
    help = "Score JSONL lines {context, reference, response} (context: list of turns or text); '-' reads stdin."

    def add_arguments(self, parser):
        parser.add_argument("--model", required=True)
        parser.add_argument(
            "--owner", default=None, help="Username owning the model; needed when several researchers use the name."
        )
        parser.add_argument("file")

    def handle(self, *args, **options):
        try:
            handle = sys.stdin if options["file"] == "-" else open(options["file"], encoding="utf-8")  # noqa: SIM115
        except OSError as error:
            raise CommandError(f"cannot read {options['file']}: {error}") from error
        triples = []
        with handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    item = json.loads(line)
                except ValueError as error:
                    raise CommandError(f"line {number}: not JSON ({error})") from error
                if not isinstance(item, dict) or not {"context", "reference", "response"} <= item.keys():
                    raise CommandError(f"line {number}: expected an object with context, reference and response")
                triples.append(item)
        owner = None
        if options["owner"]:
            owner = get_user_model().objects.filter(username=options["owner"]).first()
            if owner is None:
                raise CommandError(f"no user named {options['owner']!r}")
        try:
            model = adem_model_named(options["model"], owner=owner)
            scores = adem_score(model=model, triples=triples)
        except AdemRefusal as error:
            raise CommandError(str(error)) from error
        for item, score in zip(triples, scores, strict=True):
            self.stdout.write(json.dumps({**item, "score": round(score, 6)}))
