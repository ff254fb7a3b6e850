import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

# Django resolves the URLconf, and so imports every view module (and the numeric libraries the
# report and scoring views stand on), on the first request a process serves. Doing it here moves
# that second or two to the server's boot, so the first annotators to arrive do not wait for it.
get_resolver().url_patterns  # noqa: B018 (the access imports the views)
