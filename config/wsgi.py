import gc
import os
from pathlib import Path

from django.conf import settings
from django.core.wsgi import get_wsgi_application
from django.template import engines
from django.template.loader import get_template
from django.urls import get_resolver
from django.utils.module_loading import import_string

from config.runtime import warmup
from config.runtime.background import serve_in_background

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

# Without a broker, work a page starts runs on this process's threads, not in the request.
serve_in_background()
if settings.CELERY_TASK_ALWAYS_EAGER:
    # and this process computes the metrics: load their models now, on a thread, not in the first run
    warmup.warm_models_in_background()

# Django resolves the URLconf, and so imports every view module (and the numeric libraries the
# report and scoring views stand on), on the first request a process serves. Doing it here moves
# that second or two to the server's boot, so the first annotators to arrive do not wait for it.
get_resolver().url_patterns  # noqa: B018 (the access imports the views)


def _warm(resolver):
    """Each URL pattern compiles its regex on first use (about 15 ms of a first request), and
    `reverse()` fills each resolver's tables of names on first use (about 0.1 s): do both now."""
    resolver.reverse_dict  # noqa: B018 (the access fills them)
    for entry in resolver.url_patterns:
        entry.pattern.regex  # noqa: B018 (the access compiles it)
        if hasattr(entry, "url_patterns"):
            _warm(entry)


_warm(get_resolver())
# And what the first rendered page imports: the context processors and the messages storage.
engines["django"].engine.template_context_processors  # noqa: B018 (the access imports them)
import_string(settings.MESSAGE_STORAGE)

# Likewise the cached template loader compiles a template the first time a process renders it;
# compile the project's templates now (a broken one then stops the boot, not a request).
_TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
for _path in sorted(_TEMPLATES.rglob("*.html")):
    get_template(_path.relative_to(_TEMPLATES).as_posix())

# The boot leaves some 375,000 objects that live as long as the process (Django, the URLconf, the
# numeric libraries the report views import). A full garbage collection walks all of them (about
# 0.25 s of CPU here), and one that falls in a burst of annotators stalls every request the worker
# holds. Freezing them moves them out of the collector's sight; what requests allocate is still
# collected as before.
gc.collect()
gc.freeze()
