"""`python manage.py report --dataset NAME [--survey S] [--format json|csv|latex|summary]` to stdout."""

from django.core.management.base import BaseCommand, CommandError

from analysis.report.options import EPSILONS, RATING_SCORINGS, SCALES, WEIGHTINGS, report_options
from analysis.services.build import report_build
from analysis.services.exports import TABLES, summary_table, to_csv, to_json, to_latex
from annotation.management.cli import add_owner_argument, dataset_or_error
from annotation.models import Survey

FORMATS = {"json": to_json, "latex": to_latex, "summary": summary_table}


class Command(BaseCommand):
    help = "Compute the metric-human correlation report of a dataset and write it to stdout."

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True, help="Dataset name.")
        add_owner_argument(parser)
        parser.add_argument("--survey", help="Limit to one survey (name) of the dataset.")
        parser.add_argument("--format", choices=["json", "csv", "latex", "summary"], default="json")
        parser.add_argument("--table", choices=TABLES, help="With --format csv: only this table.")
        parser.add_argument("--aspect", default="overall")
        parser.add_argument("--systems", help="Comma-separated system names to keep.")
        parser.add_argument("--no-exclusions", action="store_true", help="Use every rating, ignoring exclusions.")
        parser.add_argument("--learned-metric", help="Metric for the failure analysis (default: the first adem:*).")
        parser.add_argument("--bootstrap", type=int, help="Bootstrap resamples (default: settings, 1000).")
        parser.add_argument("--epsilon", choices=list(EPSILONS), help="The alt-test's cost margin (default crowd).")
        parser.add_argument("--alt-test-metrics", action="store_true", help="Alt-test every metric, not only judges.")
        parser.add_argument("--scale", choices=SCALES, help="The arena ranking's scale (default log).")
        parser.add_argument("--baseline", help="System the length-controlled win rates are against.")
        parser.add_argument(
            "--alt-scoring",
            choices=sorted(RATING_SCORINGS),
            help="How the alt-test scores a rating against the remaining annotators (default neg_rmse).",
        )
        parser.add_argument(
            "--weighting",
            choices=list(WEIGHTINGS),
            help="How each response's ratings become its human score: plain mean (default), per-worker z-scores, "
            "or a MACE, Dawid-Skene or ordinal spammer model competence-weighted mean.",
        )

    def handle(self, *args, **options):
        dataset = dataset_or_error(options["dataset"], options["owner"])
        survey = None
        if options["survey"]:
            survey = Survey.objects.filter(dataset=dataset, name=options["survey"]).first()
            if survey is None:
                raise CommandError(f"No survey named {options['survey']!r} in dataset {dataset.name!r}.")
        systems = [s.strip() for s in options["systems"].split(",") if s.strip()] if options["systems"] else None
        data = report_build(
            dataset=dataset,
            survey=survey,
            aspect=options["aspect"],
            systems=systems,
            apply_exclusions=not options["no_exclusions"],
            learned_metric=options["learned_metric"],
            n_boot=options["bootstrap"],
            options=report_options(
                epsilon=options["epsilon"],
                alt_test_metrics=options["alt_test_metrics"],
                scale=options["scale"],
                baseline=options["baseline"],
                weighting=options["weighting"],
                alt_scoring=options["alt_scoring"],
            ),
        )
        if data["n_responses"] == 0 and not data.get("pairwise") and not data.get("conversations"):
            self.stderr.write("No accepted ratings match these filters; the report is empty.")
        if options["format"] == "csv":
            self.stdout.write(to_csv(data, options["table"]), ending="")
        else:
            self.stdout.write(FORMATS[options["format"]](data), ending="")
