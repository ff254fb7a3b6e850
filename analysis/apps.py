from django.apps import AppConfig


class AnalysisConfig(AppConfig):
    name = "analysis"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from analysis.pipeline import analysis_steps  # apps are loaded only now
        from annotation.extensions import register_pipeline_steps

        register_pipeline_steps(analysis_steps)  # the Report step of the pipeline bar
