from django.apps import AppConfig

from config import startup


class StartupConfig(AppConfig):
    """The project's own start-up step; last in INSTALLED_APPS, so its ready() runs once every app is ready."""

    name = "config"
    label = "ratelab_config"

    def ready(self):
        startup.resume_collection()  # see config/startup.py
