import json

from django.core.management.base import BaseCommand, CommandError

from annotation.management.cli import add_owner_argument, survey_or_error
from annotation.models import Survey
from annotation.services.demo_data.simulation import ratings_simulate


class Command(BaseCommand):
    help = "Simulated annotators work a live survey through the real claim/submit path."

    def add_arguments(self, parser):
        parser.add_argument("survey", help="Survey name.")
        add_owner_argument(parser)
        parser.add_argument("--annotators", type=int, default=10)
        parser.add_argument("--careless", type=float, default=0.0, help="Fraction of careless annotators.")
        parser.add_argument("--straight-liners", type=int, default=0, help="Annotators who give one answer throughout.")
        parser.add_argument("--pasters", type=int, default=0, help="Annotators who paste their written replies.")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--max-hits", type=int, default=None, help="HITs per simulated annotator at most.")

    def handle(self, **options):
        survey = survey_or_error(options["survey"], options["owner"])
        if survey.status != Survey.Status.LIVE:
            raise CommandError(f"Survey {survey.name!r} is {survey.status}; launch it first.")
        if not 0 <= options["careless"] <= 1:
            raise CommandError("--careless is a fraction between 0 and 1.")
        try:
            summary = ratings_simulate(
                survey=survey,
                n_annotators=options["annotators"],
                seed=options["seed"],
                careless_fraction=options["careless"],
                max_hits=options["max_hits"],
                straight_liners=options["straight_liners"],
                pasters=options["pasters"],
            )
        except ValueError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(json.dumps(summary))
