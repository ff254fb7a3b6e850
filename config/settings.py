"""RateLab settings: one module, configured from the environment.

Embedded defaults need no service: SQLite and eager Celery tasks. Real services are
switched on by URL (`DATABASE_URL`, `CELERY_BROKER_URL`). `DJANGO_DEBUG=0` is production:
`SECRET_KEY` must then be set and `manage.py check --deploy` passes.
"""

from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_int, env_list, env_str, env_url

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DJANGO_DEBUG", True)

SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DJANGO_DEBUG=0.")
    # Only for local development; production refuses to start without a real key.
    SECRET_KEY = "dev-only-insecure-key-ratelab-do-not-use-in-production-0123456789"

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "annotation",
    "scoring",
    "analysis",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------
DATABASE_URL = env_url(
    "DATABASE_URL",
    f"sqlite:///{BASE_DIR / 'ratelab.sqlite3'}",
    schemes={"sqlite", "postgres", "postgresql", "pgsql"},
)
try:
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=env_int("DB_CONN_MAX_AGE", 0, minimum=0))}
except ValueError as exc:  # e.g. a port that is not a number
    raise ImproperlyConfigured(f"DATABASE_URL cannot be parsed: {exc}") from None
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL and a busy timeout let the dev server, the eager "worker" and tests share the file.
    DATABASES["default"]["OPTIONS"] = {"timeout": 20, "init_command": "PRAGMA journal_mode=WAL;"}
    DATABASES["default"].setdefault("TEST", {})["NAME"] = env_str("SQLITE_TEST_NAME") or None
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Auth -----------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "annotation:dataset_list"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(BASE_DIR / "media")))
# Trained models, encoder caches and VHRED checkpoints live here.
RATELAB_DATA_DIR = Path(env_str("RATELAB_DATA_DIR", str(BASE_DIR / "var")))
# Annotator pages: how many reverse proxies in front of the app append to X-Forwarded-For (0: use
# REMOTE_ADDR), for the per-address cap on new annotators; a CSRF failure on them keeps the answers.
RATELAB_TRUSTED_PROXIES = env_int("RATELAB_TRUSTED_PROXIES", 0, minimum=0)
CSRF_FAILURE_VIEW = "annotation.views.csrf_failure.csrf_failure"

# Uploads of datasets and ratings can be large; files stream to disk beyond this.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 50 * 1024 * 1024, minimum=1024)
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024

# --- Security (production) ------------------------------------------------------
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # the annotator page's small script reads nothing from it, but forms need it
X_FRAME_OPTIONS = "DENY"
if not DEBUG:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000, minimum=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_CONTENT_TYPE_NOSNIFF = True
    SECURE_REFERRER_POLICY = "same-origin"

# The app's public HTTPS address; MTurk's ExternalQuestion points here.
PUBLIC_BASE_URL = env_str("PUBLIC_BASE_URL").rstrip("/")

# Prolific: the API token is read from PROLIFIC_API_TOKEN by the client itself, never kept in settings.
PROLIFIC_API_URL = env_str("PROLIFIC_API_URL", "https://api.prolific.com/api/v1/")
PROLIFIC_WEBHOOK_SECRET = env_str("PROLIFIC_WEBHOOK_SECRET")

# --- Celery ---------------------------------------------------------------------
CELERY_BROKER_URL = env_url("CELERY_BROKER_URL", "", schemes={"redis", "rediss", "amqp", "amqps", "memory"})
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
_default_backend = CELERY_BROKER_URL if CELERY_BROKER_URL.startswith(("redis", "rediss")) else ""
CELERY_RESULT_BACKEND = env_url(
    "CELERY_RESULT_BACKEND", _default_backend or "cache+memory://", schemes={"redis", "rediss", "cache+memory", "rpc"}
)
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 60 * 60, minimum=1)
CELERY_TASK_SOFT_TIME_LIMIT = CELERY_TASK_TIME_LIMIT - 30 if CELERY_TASK_TIME_LIMIT > 60 else CELERY_TASK_TIME_LIMIT
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BEAT_SCHEDULE = {}  # apps add their periodic tasks in config/celery.py

# --- Cache ----------------------------------------------------------------------
CACHE_URL = env_url("CACHE_URL", "", schemes={"redis", "rediss"})
if CACHE_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {"botocore": {"level": "WARNING"}, "boto3": {"level": "WARNING"}},
}

# --- Analysis (correlation reports) -------------------------------------------------
ANALYSIS_BOOTSTRAP_SAMPLES = env_int("ANALYSIS_BOOTSTRAP_SAMPLES", 1000, minimum=0)
# How often a report page queues the check of its inputs (ratings, exclusions, metric scores).
ANALYSIS_CHECK_SECONDS = env_int("ANALYSIS_CHECK_SECONDS", 30, minimum=0)
