"""Run as a script by tests/test_startup.py: load the apps as a process starts, print what came heavy.

A fresh interpreter does what every web worker, Celery worker and `manage.py` command does before
its first line of work: `django.setup()` (models, admin autodiscovery), resolving every URL pattern
(every view module), the system checks, and the Celery app's task registration. It prints JSON:
`{"loaded": {module: chain}, "tasks": [...]}` where chain lists, innermost first, the modules (and
project functions) that were executing when the module was first looked for: the import that
brought it in. A module lazy_loader only proxies (not yet executed) does not count as loaded.
"""

import importlib.abc
import importlib.util
import json
import os
import sys

HEAVY = (
    "torch",
    "transformers",
    "onnxruntime",
    "sentence_transformers",
    "sklearn",
    "matplotlib",
    "pandas",
    "pyarrow",
    "scipy.stats",
    # Not in the issue's list, but only the crowd providers' calls need them (about 0.2 s together).
    "boto3",
    "botocore",
    "httpx",
)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
chains = {}


def _heavy_name(module_name):
    return next((h for h in HEAVY if module_name == h or module_name.startswith(h + ".")), None)


def _chain(frame):
    """Executing modules (and project functions) from the import outwards; None for a lazy proxy."""
    chain = []
    while frame is not None:
        filename = frame.f_code.co_filename
        if "lazy_loader" in filename and frame.f_code.co_name in ("load", "attach"):
            return None  # lazy_loader looking the module up to proxy it: nothing runs yet
        name = frame.f_globals.get("__name__") or "?"
        if frame.f_code.co_name == "<module>" and not name.startswith("importlib"):
            item = name
        elif filename.startswith(ROOT) and f"{os.sep}.venv{os.sep}" not in filename:
            item = f"{name}.{frame.f_code.co_name}()"
        else:
            item = None
        if item and (not chain or chain[-1] != item):
            chain.append(item)
        frame = frame.f_back
    return chain


class _ImportTracer(importlib.abc.MetaPathFinder):
    """Finds nothing; notes who first looked for each heavy module (a real import looks it up first)."""

    def find_spec(self, fullname, path=None, target=None):
        heavy = _heavy_name(fullname)
        if heavy and heavy not in chains:
            chain = _chain(sys._getframe(1))
            if chain is not None:
                chains[heavy] = chain


def _walk(resolver):
    for pattern in resolver.url_patterns:  # an include's url_patterns imports its URLconf and views
        if hasattr(pattern, "url_patterns"):
            _walk(pattern)


def main():
    sys.meta_path.insert(0, _ImportTracer())
    sys.path.insert(0, ROOT)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core import checks
    from django.urls import get_resolver

    _walk(get_resolver())
    checks.run_checks()
    from config.celery import app

    app.loader.import_default_modules()  # what a worker does at start: every autodiscovered tasks module
    loaded = {
        name: chains.get(name, ["(chain not seen)"])
        for name in HEAVY
        if name in sys.modules and not isinstance(sys.modules[name], importlib.util._LazyModule)
    }
    in_sys_modules = [name for name in HEAVY if name in sys.modules]
    print(json.dumps({"loaded": loaded, "in_sys_modules": in_sys_modules, "tasks": sorted(app.tasks)}))


if __name__ == "__main__":
    main()
