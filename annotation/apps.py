from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        # System checks register on import; they read models, so only once apps are ready.
        from annotation.services.extensions.pipeline import annotation_steps
        from annotation.services.extensions.points import register_pipeline_steps
        from annotation.services.runtime import checks  # noqa: F401

        # Upload, Surveys and Quality on every dataset's pipeline bar
        register_pipeline_steps(annotation_steps)
        # consent, questionnaires and the HEDS datasheet on the survey page
        from annotation.services.extensions.points import register_survey_panel
        from annotation.views.consent_researcher import consent_panel

        register_survey_panel(consent_panel)
