"""Small helpers shared by the annotation commands."""

import os
import sys

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from annotation.importing import FORMATS, DataImportError
from annotation.models import Dataset, Survey

# Dataset and survey names are unique per owner, not site-wide. A command names one by its name,
# with --owner USERNAME when several researchers use that name, or --owner - for one with no owner
# (legacy rows, or rows whose owner's account was deleted).
NO_OWNER = "-"
OWNER_HELP = (
    "Username of the owner, needed when several researchers have one of that name "
    f"('{NO_OWNER}' for one with no owner)."
)


def add_owner_argument(parser, help=OWNER_HELP):
    parser.add_argument("--owner", default="", help=help)


def user_or_error(username):
    if not username:
        return None
    try:
        return get_user_model().objects.get(username=username)
    except get_user_model().DoesNotExist:
        raise CommandError(f"no user named {username!r}") from None


def one_named(queryset, name, *, owner="", noun):
    """The one row of `queryset` called `name`, of `owner` when given; a clear error when none or several.

    Commands run with the server's rights, so an ambiguous name lists its owners: the operator
    picks one with --owner.
    """
    rows = queryset.filter(name=name)
    if owner == NO_OWNER:
        rows = rows.filter(owner__isnull=True)
    elif owner:
        rows = rows.filter(owner=user_or_error(owner))
    found = list(rows.select_related("owner")[:20])
    whose = "" if not owner else " with no owner" if owner == NO_OWNER else f" owned by {owner!r}"
    if not found:
        raise CommandError(f"no {noun} named {name!r}{whose}")
    if len(found) > 1:
        owners = ", ".join(
            sorted(row.owner.username if row.owner else f"(no owner: --owner {NO_OWNER})" for row in found)
        )
        raise CommandError(
            f"the {noun} name {name!r} is ambiguous: {len(found)} {noun}s{whose} have it (owners: {owners}); "
            f"say whose with --owner USERNAME"
        )
    return found[0]


def dataset_or_error(name, owner=""):
    return one_named(Dataset.objects.all(), name, owner=owner, noun="dataset")


def survey_or_error(name, owner="", *, surveys=None):
    """A survey by name (or, when `name` is a number no survey is called, by id)."""
    surveys = Survey.objects.all() if surveys is None else surveys
    if name.isdigit() and not surveys.filter(name=name).exists():
        survey = surveys.filter(pk=int(name)).first()
        if survey is None:
            raise CommandError(f"no survey named or numbered {name}")
        return survey
    return one_named(surveys, name, owner=owner, noun="survey")


def quiet_broken_pipe():
    """The reader of stdout (e.g. `| head`) stopped early: not an error. Silence the final flush."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def add_worker_ids_arguments(parser):
    """`--pseudonymise` (the default) / `--real-ids` for the commands that write workers' ids."""
    ids = parser.add_mutually_exclusive_group()
    ids.add_argument(
        "--pseudonymise",
        dest="real_ids",
        action="store_false",
        help="Write workers as stable per-dataset pseudonyms A1, A2, ... (the default: fit to share).",
    )
    ids.add_argument(
        "--real-ids",
        dest="real_ids",
        action="store_true",
        help="Write the platforms' real worker ids (for your own records; do not share the file).",
    )
    parser.set_defaults(real_ids=False)


def add_output_arguments(parser):
    """`--format` and `--output`, which every export command takes."""
    parser.add_argument("--format", choices=FORMATS, default="jsonl")
    parser.add_argument("--output", help="File to write (default: stdout).")


def real_ids_warning(command, options, noun):
    """Say, when `--real-ids` was given, that the file is not to be shared."""
    if options["real_ids"]:
        command.stderr.write(f"These {noun} carry real worker ids: keep the file to yourself, do not publish it.")


def write_export(command, options, *, write, noun):
    """`write(stream, fmt)` into `--output` (saying how many `noun` it wrote) or to stdout (a closed pipe
    ends it quietly). Returns nothing."""
    if options["output"]:
        with open(options["output"], "w", encoding="utf-8", newline="") as stream:
            count = write(stream, options["format"])
        command.stderr.write(f"Wrote {count} {noun} to {options['output']}.")
        return
    try:
        write(command.stdout, options["format"])
    except BrokenPipeError:
        quiet_broken_pipe()


class DatasetExportCommand(BaseCommand):
    """An export of one dataset's records: `--dataset`, `--owner`, `--format`, `--output`; a subclass
    gives `help`, `noun` (what "Wrote N ..." counts) and `export(*, dataset, stream, fmt)`."""

    noun = ""

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True)
        add_owner_argument(parser)
        add_output_arguments(parser)

    def export(self, *, dataset, stream, fmt):
        raise NotImplementedError

    def handle(self, *args, **options):
        dataset = dataset_or_error(options["dataset"], options["owner"])

        def write(stream, fmt):
            return self.export(dataset=dataset, stream=stream, fmt=fmt)

        write_export(self, options, write=write, noun=self.noun)


class SurveyExportCommand(BaseCommand):
    """An export of one survey's answers: `--survey`, `--owner`, `--format`, `--output` and the worker-id
    options; a subclass gives `help`, `noun`, `ids_noun` (the real-ids warning's), `refusal(survey)`
    (why the survey is not of its kind, or "") and `export(*, survey, stream, fmt, real_ids)`."""

    noun = ids_noun = ""

    def add_arguments(self, parser):
        parser.add_argument("--survey", required=True, help="Survey name (or id).")
        add_owner_argument(parser)
        add_output_arguments(parser)
        add_worker_ids_arguments(parser)

    def refusal(self, survey):
        return ""

    def export(self, *, survey, stream, fmt, real_ids):
        raise NotImplementedError

    def handle(self, *args, **options):
        survey = survey_or_error(options["survey"], options["owner"])
        refusal = self.refusal(survey)
        if refusal:
            raise CommandError(refusal)
        real_ids_warning(self, options, self.ids_noun)

        def write(stream, fmt):
            return self.export(survey=survey, stream=stream, fmt=fmt, real_ids=options["real_ids"])

        write_export(self, options, write=write, noun=self.noun)


def run_export(command, options, *, export, noun):
    """The body the dataset-wide export commands share: the dataset (and `--survey`) looked up, then
    `export(...)` written by `write_export`."""
    dataset = dataset_or_error(options["dataset"], options["owner"])
    real_ids = options["real_ids"]
    real_ids_warning(command, options, noun)
    survey = None
    if options["survey"]:
        survey = dataset.surveys.filter(name=options["survey"]).first()
        if survey is None:
            raise CommandError(f"dataset {dataset.name!r} has no survey named {options['survey']!r}")

    def write(stream, fmt):
        return export(dataset=dataset, survey=survey, stream=stream, fmt=fmt, real_ids=real_ids)

    write_export(command, options, write=write, noun=noun)


def add_import_arguments(parser, *, noun, default_survey):
    """The arguments the judgement-import commands share: FILE, --dataset, --survey, --format, --owner."""
    parser.add_argument("file")
    parser.add_argument("--dataset", required=True, help=f"Name of the dataset the {noun} refer to.")
    parser.add_argument("--survey", help=f"Name of the new survey (default: <dataset>-{default_survey}).")
    parser.add_argument("--format", choices=FORMATS, help="Default: from the file name (.csv), else jsonl.")
    parser.add_argument(
        "--owner",
        default="",
        help="Username of the dataset's owner, needed when several researchers have a dataset of that name; "
        "also owns the new survey (default: the dataset's owner).",
    )


def run_import(options, *, import_file, **extra):
    """The body the judgement-import commands share: `import_file(...)` into a new survey, all or nothing.

    A bad file gives the same lines as the upload forms (every problem up to a cap), and nothing is written.
    """
    dataset = dataset_or_error(options["dataset"], options["owner"])
    try:
        return import_file(
            file=options["file"],
            dataset=dataset,
            survey_name=options["survey"],
            owner=user_or_error(options["owner"] if options["owner"] != NO_OWNER else ""),
            fmt=options["format"],
            **extra,
        )
    except DataImportError as exc:
        first, *rest = exc.report_lines()
        raise CommandError("\n".join([f"{options['file']}: {first}", *rest])) from None
