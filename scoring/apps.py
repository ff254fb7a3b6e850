from django.apps import AppConfig


class ScoringConfig(AppConfig):
    name = "scoring"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from annotation.services.extensions.deletion_guards import register_deletion_guard  # apps loaded only now
        from annotation.services.extensions.points import (  # apps loaded only now
            register_pipeline_steps,
            register_response_extras,
            register_sentence_encoder,
        )
        from scoring import checks, tasks  # noqa: F401  checks register on import; tasks by name (services/metrics/compute.py)
        from scoring.selectors.pipeline import scoring_steps
        from scoring.selectors.scores import metric_extras
        from scoring.services.deletion_guards import scoring_deletion_guard

        # the dataset page and export_dataset show metric scores beside each response
        register_response_extras(metric_extras)
        register_pipeline_steps(scoring_steps)  # Metrics and ADEM on the pipeline bar
        register_deletion_guard(scoring_deletion_guard)  # no dataset deleted under a running job
        # MiniLM sentence vectors for the near-duplicate and reference-LLM flags (loaded on first use)
        register_sentence_encoder(_sentence_vectors)


def _sentence_vectors(texts):
    from scoring.metrics.neural import sentence_vectors  # torch and the model load on first use only

    return sentence_vectors(texts)
