from django.core.management.base import BaseCommand, CommandError

from annotation.crowd.base import ProviderError
from annotation.crowd.prolific.study import pay_check, study_settings
from annotation.crowd.prolific.tasks import prolific_sync_survey
from annotation.models import Survey


class Command(BaseCommand):
    help = "Reconcile a Prolific survey's submissions with Prolific's own list (idempotent)."

    def add_arguments(self, parser):
        parser.add_argument("--survey", required=True, help="Survey name.")

    def handle(self, *args, survey, **options):
        found = Survey.objects.filter(name=survey, provider=Survey.Provider.PROLIFIC).first()
        if found is None:
            raise CommandError(f"No Prolific survey named {survey!r}.")
        try:
            summary = prolific_sync_survey.apply(args=(found.pk,), throw=True).get()
        except ProviderError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(" ".join(f"{key}={value}" for key, value in summary.items()))
        measured = pay_check(study_settings(found))["measured"]
        if measured:
            self.stderr.write(measured)
