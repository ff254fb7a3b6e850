"""Create a bearer token for the ADEM scoring endpoint (shown once)."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from scoring.services.tokens import api_token_create


class Command(BaseCommand):
    help = "Create an API token for POST /scoring/adem/<name>/score; prints the key once."

    def add_arguments(self, parser):
        parser.add_argument("--user", required=True)
        parser.add_argument("--name", default="")

    def handle(self, *args, **options):
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"no user named {options['user']!r}")
        self.stdout.write(api_token_create(user=user, name=options["name"]))
