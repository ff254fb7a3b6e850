"""Score a JSONL file of {context, reference, response} with a registered ADEM model."""

import json
import sys

from django.core.management.base import BaseCommand, CommandError

from scoring.services_adem import AdemRefusal, adem_score


class Command(BaseCommand):
    help = "Score JSONL lines {context, reference, response} (context: list of turns or text); '-' reads stdin."

    def add_arguments(self, parser):
        parser.add_argument("--model", required=True)
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
        try:
            scores = adem_score(model=options["model"], triples=triples)
        except AdemRefusal as error:
            raise CommandError(str(error)) from error
        for item, score in zip(triples, scores, strict=True):
            self.stdout.write(json.dumps({**item, "score": round(score, 6)}))
