"""Loading the apps stays light: no heavy library is imported until the code that computes with it runs.

Each check runs in a fresh interpreter: this test process has long since imported torch and pandas
through other tests, so `sys.modules` here says nothing about start-up. The subprocess inherits the
environment, so it loads the apps against whichever database the suite runs on.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROBE = Path(__file__).resolve().parent / "startup_probe.py"


def _python(*args, env=None):
    done = subprocess.run(
        [sys.executable, *args], check=False, cwd=ROOT, capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_loading_the_apps_urls_checks_and_tasks_imports_no_heavy_library():
    probe = json.loads(_python(str(PROBE)))
    # The issue's own words: none of them is in sys.modules after loading the apps (a lazily named
    # library must not even be registered there before its first use).
    assert probe["in_sys_modules"] == [], probe["in_sys_modules"]
    # the probe really registered the tasks a worker runs (a probe that loaded nothing would pass)
    assert {"scoring.tasks.compute_metrics", "analysis.report_refresh", "scoring.tasks.adem_train_task"} <= set(
        probe["tasks"]
    )
    culprits = "\n".join(f"{name} imported by {' <- '.join(chain)}" for name, chain in probe["loaded"].items())
    assert not probe["loaded"], f"heavy libraries loaded at start-up (move the import to first use):\n{culprits}"


def test_a_lazily_loaded_library_is_imported_at_first_use_and_keeps_its_errors():
    script = textwrap.dedent(
        """
        import sys
        import django
        django.setup()
        from annotation.quality.agreement import split_half as agreement
        from scoring.metrics import ngrams

        def loaded(name):
            return name in sys.modules

        before = loaded("scipy.stats"), loaded("pyarrow")
        rho = agreement.stats.spearmanr([1, 2, 3, 4], [1, 3, 2, 4]).statistic
        ids, lengths, uniques = ngrams.tokenize_many(["a b a", "c"])
        after = loaded("scipy.stats"), loaded("pyarrow")
        errors = []
        try:
            agreement.stats.no_such_function
        except AttributeError as error:
            errors.append(type(error).__name__)
        try:
            agreement.stats.spearmanr([1, 2, 3])
        except (TypeError, ValueError) as error:
            errors.append(type(error).__name__)
        print(before, after, round(float(rho), 3), lengths.tolist(), errors)
        """
    )
    out = _python("-c", script).strip()
    assert out == "(False, False) (True, True) 0.8 [3, 1] ['AttributeError', 'ValueError']"


def _manage_py_with_exit_probe(*command, env=None):
    """Run `manage.py COMMAND` as `python manage.py` would, then print, last of all at exit, whether the
    collector was on when the command ran and how many objects the collector still tracks."""
    script = textwrap.dedent(
        f"""
        import atexit, gc, json, runpy, sys
        from django.core.management.base import BaseCommand

        seen = {{}}
        execute = BaseCommand.execute

        def probed_execute(self, *args, **options):
            seen["collecting_in_command"] = gc.isenabled()
            seen["frozen_before_command"] = gc.get_freeze_count()
            return execute(self, *args, **options)

        BaseCommand.execute = probed_execute
        # registered first, so run last of the atexit handlers, just before finalisation
        atexit.register(lambda: print(json.dumps({{**seen, "tracked_at_exit": len(gc.get_objects())}})))
        sys.argv = ["manage.py", *{list(command)!r}]
        runpy.run_path("manage.py", run_name="__main__")
        """
    )
    return json.loads(_python("-c", script, env=env).strip().splitlines()[-1])


def test_manage_py_pauses_collection_while_the_apps_load_then_collects_during_the_command():
    seen = _manage_py_with_exit_probe("check")
    # the apps' objects were frozen once they were ready (config/runtime/startup.py) ...
    assert seen["frozen_before_command"] > 50_000, seen
    # ... and the command itself runs with the collector on, as any long command needs
    assert seen["collecting_in_command"] is True


def test_manage_py_leaves_what_is_alive_at_exit_out_of_the_final_collection():
    seen = _manage_py_with_exit_probe("check")
    # everything alive once the command returned is frozen: the collector tracks only what the
    # atexit handlers made since (a few objects), not the ~100,000 the finalisation would walk
    assert seen["tracked_at_exit"] < 1_000, seen


def test_settings_without_the_startup_app_leave_the_collector_on(tmp_path):
    """A lab's own settings module that leaves config.apps.StartupConfig out: nothing would turn the
    collector on again after the apps load, so manage.py turns it on as soon as the settings say so."""
    (tmp_path / "lab_settings.py").write_text(
        "from config.settings import *  # noqa: F403\n"
        "INSTALLED_APPS = [app for app in INSTALLED_APPS if app != 'config.apps.StartupConfig']  # noqa: F405\n"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "lab_settings", "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"}
    seen = _manage_py_with_exit_probe("check", env=env)
    assert seen["collecting_in_command"] is True and seen["frozen_before_command"] == 0, seen


def test_compute_metrics_scores_the_word_overlap_metrics_without_loading_pandas(tmp_path):
    """The engine's BLEU, ROUGE-L and CIDEr use Arrow and NumPy only: pandas (0.2-0.3 s to import)
    stays out of a fresh `compute_metrics` for them (docs/metrics.md, "Start-up")."""
    env = {key: value for key, value in os.environ.items() if key != "CELERY_BROKER_URL"}
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'startup.sqlite3'}"
    example = ROOT / "static" / "annotation" / "examples" / "example-dataset.jsonl"
    script = textwrap.dedent(
        f"""
        import atexit, json, runpy, sys
        from django.core.management import call_command

        def report():
            from scoring.models import MetricScore
            print(json.dumps({{
                "scores": MetricScore.objects.filter(metric__in=["bleu4", "rouge_l", "cider"]).count(),
                "loaded": {{name: name in sys.modules for name in ("pandas", "pyarrow")}},
            }}))

        atexit.register(report)
        sys.argv = ["manage.py", "compute_metrics", "--dataset", "example", "--no-progress",
                    "--metric", "bleu4", "--metric", "rouge_l", "--metric", "cider"]
        import django
        django.setup()
        call_command("migrate", verbosity=0)
        call_command("import_dataset", {str(example)!r}, "--name", "example", verbosity=0)
        runpy.run_path("manage.py", run_name="__main__")
        """
    )
    seen = json.loads(_python("-c", script, env=env).strip().splitlines()[-1])
    # the metrics were computed (Arrow ran), and pandas never loaded: 4 contexts x 3 systems x 3 metrics
    assert seen == {"scores": 36, "loaded": {"pandas": False, "pyarrow": True}}, seen
