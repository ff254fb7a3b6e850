from django.apps import AppConfig


class ScoringConfig(AppConfig):
    name = "scoring"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from annotation.extensions.points import (  # apps loaded only now
            register_pipeline_steps,
            register_response_extras,
        )
        from scoring import checks, tasks  # noqa: F401  checks register on import; tasks by name (services/metrics/compute.py)
        from scoring.selectors.pipeline import scoring_steps
        from scoring.selectors.scores import metric_extras

        # the dataset page and export_dataset show metric scores beside each response
        register_response_extras(metric_extras)
        register_pipeline_steps(scoring_steps)  # Metrics and ADEM on the pipeline bar
