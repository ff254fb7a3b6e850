from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        # System checks register on import; they read models, so only once apps are ready.
        from annotation import checks  # noqa: F401
        from annotation.extensions import register_pipeline_steps
        from annotation.pipeline import annotation_steps

        # Upload, Surveys and Quality on every dataset's pipeline bar
        register_pipeline_steps(annotation_steps)
