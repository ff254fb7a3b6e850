import os
from pathlib import Path

from django.core.wsgi import get_wsgi_application
from django.template.loader import get_template
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

# Django resolves the URLconf, and so imports every view module (and the numeric libraries the
# report and scoring views stand on), on the first request a process serves. Doing it here moves
# that second or two to the server's boot, so the first annotators to arrive do not wait for it.
get_resolver().url_patterns  # noqa: B018 (the access imports the views)

# Likewise the cached template loader compiles a template the first time a process renders it;
# compile the project's templates now (a broken one then stops the boot, not a request).
_TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
for _path in sorted(_TEMPLATES.rglob("*.html")):
    get_template(_path.relative_to(_TEMPLATES).as_posix())
