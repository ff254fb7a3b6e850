from django.apps import AppConfig


class AnalysisConfig(AppConfig):
    name = "analysis"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from analysis.sections.planning import planning_panel  # apps are loaded only now
        from analysis.services.pipeline import analysis_steps
        from annotation.services.extensions.points import register_pipeline_steps, register_survey_panel

        register_pipeline_steps(analysis_steps)  # the Report step of the pipeline bar
        register_survey_panel(planning_panel)  # planning and "extend the study" on the survey page
