"""A management command's process: the garbage collector paused while Django loads, and left out at exit.

Python's collector runs every ~700 new container objects and walks the young ones; loading the apps
makes ~120,000 objects (models, URL patterns, the Celery app) that all live as long as the process,
so its 200-odd collections during `django.setup()` find nothing to free: 0.04-0.05 s of every
command (`setup` 0.44 s of CPU with it, 0.39 s without, median of 5). `manage.py` turns it off
before loading anything; once every app is ready (`StartupConfig.ready`, the last app
in INSTALLED_APPS) the objects made so far are frozen, out of every later collection, and
collection resumes for the command's own objects: a long command (runserver, migrate) collects as
it always did.

At exit, Python's finalisation collects and deallocates every object of the process one by one
(0.14 s after Django alone, 0.24 s with numpy, pandas and pyarrow loaded, measured in this
session with a timestamp written last in the process), although the operating system takes the
whole address space back at once. `manage.py` freezes what is left once the command has returned
(`leave_to_exit`): the frozen objects are not collected at finalisation, while the atexit
handlers (logging's flush, METEOR's Java process) and the closing of what is released by
reference count (files, database connections) run as before. Python does not promise to finalise
objects still alive at exit anyway.
"""

import gc

# The app whose ready() resumes the collection (config/apps.py), last in INSTALLED_APPS.
STARTUP_APP = "config.apps.StartupConfig"


def resume_unless_installed(installed_apps):
    """Turn the collector on again at once where nothing would later: settings of one's own that
    leave STARTUP_APP out would otherwise run a long command (runserver) without collecting."""
    if STARTUP_APP not in installed_apps:
        gc.enable()


def resume_collection():
    """Freeze the objects made so far and collect again, if manage.py paused the collector.

    Nothing else in RateLab turns the collector off: in a process that did not come through
    manage.py (gunicorn, Celery, pytest) it is on, and this does nothing.
    """
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def leave_to_exit():
    """Freeze every object still alive: finalisation at exit then leaves them to the operating system."""
    gc.freeze()
