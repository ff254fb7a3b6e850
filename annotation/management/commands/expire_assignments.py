from django.core.management.base import BaseCommand

from annotation.services import assignments_expire


class Command(BaseCommand):
    help = "Return abandoned (expired) assignments to the pool; what the Celery beat task runs."

    def handle(self, **options):
        self.stdout.write(f"Returned {assignments_expire()} expired assignment(s) to the pool.")
