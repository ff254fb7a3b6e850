from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        # System checks register on import; they read models, so only once apps are ready.
        from annotation.extensions.pipeline import annotation_steps
        from annotation.extensions.points import register_pipeline_steps
        from annotation.runtime import checks  # noqa: F401

        # Upload, Surveys and Quality on every dataset's pipeline bar
        register_pipeline_steps(annotation_steps)
