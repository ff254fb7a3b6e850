"""RateLab settings: one module, configured from the environment.

Embedded defaults need no service: SQLite and eager Celery tasks. Real services are
switched on by URL (`DATABASE_URL`, `CELERY_BROKER_URL`). `DJANGO_DEBUG=0` is production:
`SECRET_KEY` must then be set and `manage.py check --deploy` passes.
"""

from datetime import timedelta
from pathlib import Path

import dj_database_url
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from config.env import env_assignments, env_bool, env_choice, env_int, env_list, env_str, env_url

BASE_DIR = Path(__file__).resolve().parent.parent

# `make demo` (RATELAB_DEMO=1): production settings on plain-http localhost. Debug off (a 404 is the
# plain page, not Django's list of every URL), static files from collectstatic through WhiteNoise,
# a secret key generated once into the data directory, no HTTPS redirect and no Secure-only cookies.
DEMO = env_bool("RATELAB_DEMO", False)
DEBUG = env_bool("DJANGO_DEBUG", not DEMO)

SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY and DEMO:
    from config.security.demo_secret import demo_secret_key

    SECRET_KEY = demo_secret_key(Path(env_str("RATELAB_DATA_DIR", str(BASE_DIR / "var"))))
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
    "axes",
    "csp",
    "config.apps.ProjectConfig",
    # last: its ready() resumes the garbage collection manage.py paused while the apps load
    "config.apps.StartupConfig",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Pages and JSON gzipped (static files come compressed from WhiteNoise above). BREACH: Django's
    # GZipMiddleware (5.x) pads every compressed response with random bytes ("heal the BREACH"), and
    # CSRF tokens in pages are masked afresh per response, so a secret is never repeated verbatim.
    "django.middleware.gzip.GZipMiddleware",
    # Below WhiteNoise, so static files (served above) keep their long caching; every other response
    # is private data or a page with a CSRF token: Cache-Control: private, no-store.
    "config.security.middleware.no_store",
    "csp.middleware.CSPMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "axes.middleware.AxesMiddleware",  # last, as django-axes asks: turns a lockout into its page
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
    # Not a check: its password_changed() revokes the user's scoring-API tokens whenever a new
    # password is set (reset link, admin, changepassword), as Django ends the other sessions.
    {"NAME": "scoring.services.tokens.RevokeApiTokensOnPasswordChange"},
]
# PBKDF2-SHA256 at OWASP's 600,000 iterations (config/hashers.py: a login was one hash at Django's
# 1,000,000, 0.5-1.2 s of CPU here); hashes of Django's other default hashers still verify.
PASSWORD_HASHERS = [
    "config.hashers.PBKDF2SHA256PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2SHA1PasswordHasher",
    "django.contrib.auth.hashers.Argon2PasswordHasher",
    "django.contrib.auth.hashers.BCryptSHA256PasswordHasher",
    "django.contrib.auth.hashers.ScryptPasswordHasher",
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "annotation:dataset_list"
LOGOUT_REDIRECT_URL = "login"

# Login throttling (django-axes): LOGIN_FAILURE_LIMIT wrong passwords for one username from one
# address lock that pair out for LOGIN_LOCKOUT_MINUTES, counted from the last failure before the lock
# (failures during the lock do not extend it, so nobody can keep a researcher out for good). Each
# failure and the lock are logged (logger "axes"); passwords are never stored or logged.
AUTHENTICATION_BACKENDS = [
    "config.security.login_throttle.LoginThrottleBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 12, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_LOCKOUT_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_LOCKOUT_CALLABLE = "config.security.login_throttle.lockout_response"
AXES_CLIENT_IP_CALLABLE = "config.security.login_throttle.client_ip"
AXES_SENSITIVE_PARAMETERS = ["csrfmiddlewaretoken"]
# How many proxies in front of the app append to X-Forwarded-For (0: the peer address is the client's),
# for every use of the client's address: login throttling and the annotator pages' hourly cap on
# newcomers per address (config/security/login_throttle.py client_ip). RATELAB_TRUSTED_PROXIES is another name
# for the same number: with two settings, a server that set one read every annotator (or every login)
# as coming from its proxy's address, and the cap then refused all but the first few newcomers.
_proxy_counts = {name: env_int(name, None, minimum=0) for name in ("TRUSTED_PROXY_COUNT", "RATELAB_TRUSTED_PROXIES")}
if len({count for count in _proxy_counts.values() if count is not None}) > 1:
    raise ImproperlyConfigured(
        "TRUSTED_PROXY_COUNT and RATELAB_TRUSTED_PROXIES name the same number of proxies and differ "
        f"({_proxy_counts['TRUSTED_PROXY_COUNT']} and {_proxy_counts['RATELAB_TRUSTED_PROXIES']}): set one."
    )
TRUSTED_PROXY_COUNT = next((count for count in _proxy_counts.values() if count is not None), 0)

# Password reset by e-mail (/accounts/password_reset/). The console backend prints the mail to the
# server's log, enough for development; production sets EMAIL_BACKEND to SMTP and the EMAIL_* below.
EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25, minimum=1)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "RateLab <ratelab@localhost>")
PASSWORD_RESET_TIMEOUT = env_int("PASSWORD_RESET_TIMEOUT", 3 * 24 * 3600, minimum=60)
# Reset mails per address, and reset requests per client, within PASSWORD_RESET_THROTTLE_MINUTES
# (config/security/password_reset.py: past the first, nothing is sent and the page is the same; the second, 429).
PASSWORD_RESET_MAILS_PER_ADDRESS = env_int("PASSWORD_RESET_MAILS_PER_ADDRESS", 3, minimum=1)
PASSWORD_RESET_REQUESTS_PER_CLIENT = env_int("PASSWORD_RESET_REQUESTS_PER_CLIENT", 10, minimum=1)
PASSWORD_RESET_THROTTLE_MINUTES = env_int("PASSWORD_RESET_THROTTLE_MINUTES", 60, minimum=1)

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
# Annotator pages: a CSRF failure on them keeps the answers (their client address: TRUSTED_PROXY_COUNT).
CSRF_FAILURE_VIEW = "annotation.views.csrf_failure.csrf_failure"

# Uploads of datasets and ratings can be large; files stream to disk beyond this.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 50 * 1024 * 1024, minimum=1024)
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
# A larger uploaded file is refused while it streams in (annotation/services/runtime/uploads.py),
# before it is read whole.
UPLOAD_MAX_MB = env_int("UPLOAD_MAX_MB", 100, minimum=1)
FILE_UPLOAD_HANDLERS = [
    "annotation.services.runtime.uploads.SizeLimitUploadHandler",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]

# --- Security (production) ------------------------------------------------------
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # the annotator page's small script reads nothing from it, but forms need it
X_FRAME_OPTIONS = "DENY"
if not DEBUG:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEMO)
    SESSION_COOKIE_SECURE = not DEMO  # the demo is plain http on this machine
    CSRF_COOKIE_SECURE = not DEMO
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEMO else 31536000, minimum=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_CONTENT_TYPE_NOSNIFF = True
    SECURE_REFERRER_POLICY = "same-origin"

# Content-Security-Policy on every response (django-csp). Pages load scripts, styles, images and
# fonts from this site only; no inline script or style="" anywhere (one static JS file per page).
# The MTurk task page replaces frame-ancestors (MTurk frames it) and form-action (it posts the
# finished assignment to MTurk's site): annotation/views/crowd/mturk.py.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}

# The app's public HTTPS address; MTurk's ExternalQuestion points here.
PUBLIC_BASE_URL = env_str("PUBLIC_BASE_URL").rstrip("/")

# Prolific: the API token is read from PROLIFIC_API_TOKEN by the client itself, never kept in settings.
PROLIFIC_API_URL = env_str("PROLIFIC_API_URL", "https://api.prolific.com/api/v1/")
PROLIFIC_WEBHOOK_SECRET = env_str("PROLIFIC_WEBHOOK_SECRET")
# The workspace a researcher's block-list participant group is created in (Prolific needs one).
PROLIFIC_WORKSPACE_ID = env_str("PROLIFIC_WORKSPACE_ID")
# The currency Prolific pays this server's studies in: the workspace's (a token belongs to one
# workspace, whose currency is GBP or USD). New studies start in it and the survey form checks the
# reward against Prolific's floor in it; with PROLIFIC_WORKSPACE_ID, publishing checks it against
# the workspace's own `currency_code`.
PROLIFIC_CURRENCY = env_choice("PROLIFIC_CURRENCY", "GBP", choices=("GBP", "USD"))

# LLM judges: the SDK retries 429/5xx/timeouts this many times (honouring Retry-After), each request
# waiting at most JUDGE_TIMEOUT_SECONDS. A judge's API key is read from the variable the judge names.
JUDGE_MAX_RETRIES = env_int("JUDGE_MAX_RETRIES", 4, minimum=0)
JUDGE_TIMEOUT_SECONDS = env_int("JUDGE_TIMEOUT_SECONDS", 60, minimum=1)
# ...and the part of it a connection may take: a host that never answers is given up after this.
JUDGE_CONNECT_TIMEOUT_SECONDS = env_int("JUDGE_CONNECT_TIMEOUT_SECONDS", 10, minimum=1)
# The hosts a judge's base URL may name (exact, ".example.org" for a domain and its subdomains, "*"
# for any). Empty: any host but link-local addresses (cloud metadata). A shared server sets it, so
# that no researcher can point the workers' requests at internal services.
JUDGE_ALLOWED_HOSTS = env_list("JUDGE_ALLOWED_HOSTS")
# Loopback, private, unique-local and other non-global addresses (a judge served on 127.0.0.1) only
# where the operator opts in; link-local (cloud metadata) never. Names are resolved and each address checked.
JUDGE_ALLOW_PRIVATE_HOSTS = env_bool("JUDGE_ALLOW_PRIVATE_HOSTS", False)
# The key variables a researcher's judge may name: "alice:ALICE_OPENAI_KEY,*:LAB_OPENAI_KEY" ("*":
# everyone). Unset or empty: none (judges then run only against servers that want no key).
JUDGE_KEY_VARIABLES = env_assignments("JUDGE_KEY_VARIABLES")

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
# The soft limit lets a task record why it stopped (its run shows the error) before the hard limit
# kills it; equal limits (as short ones were) raced, and the kill left the run to the watchdog.
_hard_limit = CELERY_TASK_TIME_LIMIT
CELERY_TASK_SOFT_TIME_LIMIT = _hard_limit - 30 if _hard_limit > 60 else _hard_limit * 0.8
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BEAT_SCHEDULE = {}  # apps add their periodic tasks in config/celery.py
# Redis hands a message that a worker took but never acknowledged (the worker was killed) to
# another worker only after this many seconds (kombu's default: an hour, whatever the tasks'
# limits). A task never runs longer than its hard time limit, so a message unacknowledged for a
# minute more than that belongs to a dead worker. (RabbitMQ notices a closed connection at once.)
# A task waiting for its countdown is unacknowledged too (MTurk retries back off up to 300 s):
# the timeout also covers the longest countdown, or such a task would run twice.
_longest_countdown = 300
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": max(CELERY_TASK_TIME_LIMIT, _longest_countdown) + 60}
# Runs (metric runs, ADEM training, reports) that survive a dead worker: a task that works on a
# run stamps the run's heartbeat every RUN_HEARTBEAT_SECONDS; the watchdog (Celery beat every
# RUN_WATCHDOG_SECONDS, or `manage.py recover_runs`) re-queues a run whose heartbeat is older
# than RUN_STALL_SECONDS and fails one whose work was lost with its worker RUN_MAX_ATTEMPTS times.
RUN_HEARTBEAT_SECONDS = env_int("RUN_HEARTBEAT_SECONDS", 30, minimum=1)
RUN_STALL_SECONDS = env_int("RUN_STALL_SECONDS", 180, minimum=1)
RUN_MAX_ATTEMPTS = env_int("RUN_MAX_ATTEMPTS", 5, minimum=1)
RUN_WATCHDOG_SECONDS = env_int("RUN_WATCHDOG_SECONDS", 60, minimum=1)
if RUN_STALL_SECONDS < 3 * RUN_HEARTBEAT_SECONDS:  # live runs would look dead between two beats
    raise ImproperlyConfigured(
        f"RUN_STALL_SECONDS={RUN_STALL_SECONDS} must be at least three heartbeats "
        f"(3 x RUN_HEARTBEAT_SECONDS={RUN_HEARTBEAT_SECONDS})."
    )
# Embedded mode (no broker): work a page starts (Compute metrics, Train ADEM, Refresh report) runs
# on this many threads of the web process, so the page answers at once; 0 runs it in the request.
EMBEDDED_WORKER_THREADS = env_int("EMBEDDED_WORKER_THREADS", 2, minimum=0)

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
    "loggers": {
        "botocore": {"level": "WARNING"},
        "boto3": {"level": "WARNING"},
        "axes.apps": {"level": "WARNING"},  # its start-up banner on every command; failures still log
        "httpx2": {"level": "WARNING"},  # the openai SDK's HTTP client: a line per judge request otherwise
        "httpx": {"level": "WARNING"},
        "openai": {"level": "WARNING"},  # its DEBUG lines dump request options; nothing a log needs
    },
}

# --- Crowd integrity (issue 40) ------------------------------------------------------
# The near-duplicate and reference-LLM flags compare MiniLM sentence vectors as well as word n-grams
# (the model loads once per process on the first quality recompute with written replies, ~4 s).
INTEGRITY_EMBEDDINGS = env_bool("RATELAB_INTEGRITY_EMBEDDINGS", True)

# --- Analysis (correlation reports) -------------------------------------------------
ANALYSIS_BOOTSTRAP_SAMPLES = env_int("ANALYSIS_BOOTSTRAP_SAMPLES", 1000, minimum=0)
# How often a report page queues the check of its inputs (ratings, exclusions, metric scores).
ANALYSIS_CHECK_SECONDS = env_int("ANALYSIS_CHECK_SECONDS", 30, minimum=0)
# Up to this many ratings, a report page compares a cheap marker of its inputs on every view, so
# a change (an exclusion override) shows "recomputing" at once; larger studies rely on the check above.
ANALYSIS_PAGE_CHECK_MAX_RATINGS = env_int("ANALYSIS_PAGE_CHECK_MAX_RATINGS", 10_000, minimum=0)
