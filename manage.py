#!/usr/bin/env python
import gc
import os
import sys


def main():
    gc.disable()  # while the apps load; their last one turns it on again (config/runtime/startup.py)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        settings.INSTALLED_APPS  # noqa: B018  (loads the settings: a bad environment variable stops here)
    except ImproperlyConfigured as exc:
        sys.exit(f"RateLab configuration error: {exc}")

    from config.runtime import startup  # the settings load the config package, so nothing more loads here

    startup.resume_unless_installed(settings.INSTALLED_APPS)
    try:
        execute_from_command_line(sys.argv)
    finally:
        startup.leave_to_exit()


if __name__ == "__main__":
    main()
