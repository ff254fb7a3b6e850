from django.core.management.base import BaseCommand, CommandError

from annotation.importing import FORMATS
from annotation.kinds.bws.exporting import bws_export
from annotation.kinds.bws.kind import BWSKind
from annotation.kinds.registry import kind_for
from annotation.management.cli import add_owner_argument, add_worker_ids_arguments, survey_or_error


class Command(BaseCommand):
    help = (
        "Write a best-worst survey's judgements, one line per judgement: worker (pseudonymised unless "
        "--real-ids), context_id, the tuple's systems in shown order, best, worst."
    )

    def add_arguments(self, parser):
        parser.add_argument("--survey", required=True, help="Survey name (or id).")
        add_owner_argument(parser)
        parser.add_argument("--format", choices=FORMATS, default="jsonl")
        parser.add_argument("--output", help="File to write (default: stdout).")
        add_worker_ids_arguments(parser)

    def handle(self, *args, **options):
        survey = survey_or_error(options["survey"], options["owner"])
        if not isinstance(kind_for(survey), BWSKind):
            raise CommandError(f"Survey {survey.name!r} is not a best-worst survey.")
        if options["real_ids"]:
            self.stderr.write("These judgements carry real worker ids: keep the file to yourself, do not publish it.")
        export = {"dataset": survey.dataset, "survey": survey, "fmt": options["format"]}
        export["real_ids"] = options["real_ids"]
        if options["output"]:
            with open(options["output"], "w", encoding="utf-8", newline="") as stream:
                count = bws_export(stream=stream, **export)
            self.stderr.write(f"Wrote {count} best-worst judgements to {options['output']}.")
            return
        bws_export(stream=self.stdout, **export)
