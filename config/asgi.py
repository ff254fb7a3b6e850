import os

from django.core.asgi import get_asgi_application

from config.runtime.background import serve_in_background

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_asgi_application()
serve_in_background()  # without a broker, work a page starts runs on this process's threads
