from django.apps import AppConfig

from config.runtime import startup


class ProjectConfig(AppConfig):
    """The project's own tables outside the three apps (config/models.py: password-reset requests).

    Apart from StartupConfig, so that a lab's settings that leave the start-up step out still have
    the tables the site's URLs need.
    """

    name = "config"
    label = "ratelab_config"


class StartupConfig(AppConfig):
    """The project's own start-up step; last in INSTALLED_APPS, so its ready() runs once every app is ready."""

    name = "config.runtime.startup"
    label = "ratelab_startup"

    def ready(self):
        startup.resume_collection()  # see config/runtime/startup.py
