"""dbspweb settings: one module, every deployment knob read from the environment.

Defaults give a working single-machine setup: SQLite under var/, Redis on localhost,
Spark in local mode. See README.md ("Configuration") for every variable.
"""
import os
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("DBSPWEB_VAR_DIR", BASE_DIR / "var"))
VAR_DIR.mkdir(parents=True, exist_ok=True)


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return default if value in (None, "") else int(value)


def env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    return default if value in (None, "") else float(value)


DEBUG = env_bool("DJANGO_DEBUG", False)  # off unless asked for: ./scripts/run and the test session turn it on
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "dev-only-insecure-key-change-me" if DEBUG else "")
if not SECRET_KEY:
    raise RuntimeError("DJANGO_SECRET_KEY must be set when DJANGO_DEBUG is off")
ALLOWED_HOSTS = [h.strip() for h in os.environ.get("DJANGO_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]").split(",") if h.strip()]
CSRF_TRUSTED_ORIGINS = [o.strip() for o in os.environ.get("DJANGO_CSRF_TRUSTED_ORIGINS", "").split(",") if o.strip()]
# Pages that may open websockets besides the server's own origin (dbspweb/origins.py):
# exact scheme://host[:port] entries; by default the CSRF trusted origins.
WEBSOCKET_ALLOWED_ORIGINS = [o.strip() for o in os.environ.get("DJANGO_WEBSOCKET_ORIGINS", ",".join(CSRF_TRUSTED_ORIGINS)).split(",")
                             if o.strip()]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "channels",
    "circuits",
    "runs",
    "connectors",
    "workers",
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

ROOT_URLCONF = "dbspweb.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
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
ASGI_APPLICATION = "dbspweb.asgi.application"
WSGI_APPLICATION = None

# --- Database: SQLite by default, DATABASE_URL switches (e.g. postgres://...) -------------
DATABASE_URL = os.environ.get("DATABASE_URL", "")
if DATABASE_URL:
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=0)}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": os.environ.get("SQLITE_PATH", str(VAR_DIR / "db.sqlite3")),
            # Web server and workers write concurrently: WAL + IMMEDIATE transactions
            # make writers queue on the lock instead of failing with "database is locked".
            "OPTIONS": {
                "timeout": 30,
                "transaction_mode": "IMMEDIATE",
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
            # Tests share the database with real server and worker processes, so the test
            # database must be a file, not the in-memory default.
            "TEST": {"NAME": os.environ.get("SQLITE_TEST_PATH", str(VAR_DIR / "test_db.sqlite3"))},
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Argon2id first (argon2-cffi): a sign-in's password check is the costliest thing a request
# does; PBKDF2 hashes made before still verify, and are rehashed with Argon2 at sign-in.
PASSWORD_HASHERS = [
    "django.contrib.auth.hashers.Argon2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2SHA1PasswordHasher",
    "django.contrib.auth.hashers.ScryptPasswordHasher",
]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --- Static files: the built frontend (frontend/dist) is served under /static/app/ ------
STATIC_URL = "/static/"
STATIC_ROOT = VAR_DIR / "static"
FRONTEND_DIST = BASE_DIR / "frontend" / "dist"
STATICFILES_DIRS = [("app", FRONTEND_DIST)] if FRONTEND_DIST.exists() else []
WHITENOISE_USE_FINDERS = True  # serve straight from frontend/dist without collectstatic
WHITENOISE_AUTOREFRESH = DEBUG
# Vite names every built asset after its content hash (assets/<name>-<8 chars>.<ext>): a
# new build is a new name, so these are cached for a year and never revalidated. The
# build writes .br/.gz beside them (frontend/vite.config.ts), which WhiteNoise serves to
# browsers that accept them. index.html (served by the app view) is never cached long.
WHITENOISE_IMMUTABLE_FILE_TEST = r"^/static/app/assets/.+-[A-Za-z0-9_-]{8}\.[a-z0-9]+$"

# --- Redis: Celery broker and Channels layer ------------------------------------------
REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {
            # socket_timeout None: redis-py 8 defaults it to 5 s, which aborts the layer's
            # blocking receive (BZPOPMIN) and tears down every websocket idle for 5 s
            # (django/channels_redis#422).
            "hosts": [{"address": REDIS_URL, "socket_timeout": None}],
            "prefix": os.environ.get("CHANNELS_PREFIX", "dbspweb"),
            "capacity": 1000,
            "expiry": 60,
        },
    }
}

# Fair queueing of explain/inspect/verify on the verification queue (runs/fair_queue.py):
# owner and operators first, then signed-in readers, then anonymous ones; per requester
# (user, or client address without a session) at most RECOMPUTE_MAX_PER_REQUESTER queued or
# running, and on one run at most RECOMPUTE_MAX_PER_RUN from readers who do not operate it;
# past either a 429 with Retry-After. A slot a crashed worker never freed expires after
# RECOMPUTE_SLOT_TTL_S. More verification workers: start more processes on VERIFY_QUEUE
# (scripts/run: DBSPWEB_VERIFY_WORKERS, with the operators' lane below from 2 on;
# compose: `--scale verify-worker=N`).
RECOMPUTE_MAX_PER_REQUESTER = int(os.environ.get("DBSPWEB_RECOMPUTE_MAX_PER_REQUESTER", "4"))
RECOMPUTE_MAX_PER_RUN = int(os.environ.get("DBSPWEB_RECOMPUTE_MAX_PER_RUN", "8"))
RECOMPUTE_RETRY_AFTER_S = int(os.environ.get("DBSPWEB_RECOMPUTE_RETRY_AFTER_S", "10"))
RECOMPUTE_SLOT_TTL_S = int(os.environ.get("DBSPWEB_RECOMPUTE_SLOT_TTL_S", "900"))
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", REDIS_URL)
CELERY_RESULT_BACKEND = None
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_QUEUE", "dbspweb")
# Verifications (POST /api/runs/<id>/verify/) go to a queue of their own, consumed by a
# worker process of its own (`celery -A dbspweb worker -Q $VERIFY_QUEUE`), never by the
# workers that run ticks. Up to VERIFY_REFERENCE_MAX_ROWS input rows the reference
# evaluator recomputes the views; above, a batch Spark evaluation (dbsp/spark/recompute.py).
VERIFY_QUEUE = os.environ.get("VERIFY_QUEUE", f"{CELERY_TASK_DEFAULT_QUEUE}.verify")
# Processes on the verification queue (`manage.py run_workers --verify`, scripts/run).
VERIFY_WORKERS = env_int("DBSPWEB_VERIFY_WORKERS", 1)
# The operators' lane (workers/lanes.py, docs/scale.md): the jobs of a run's owner and
# operators (priority 0) go to VERIFY_OWNERS_QUEUE, which one verification worker consumes
# alone and the others beside VERIFY_QUEUE, so an owner's request never waits behind
# anonymous jobs running on every worker. On by default with 2 or more verification
# workers; the web processes and the workers must agree (both read these variables).
VERIFY_OWNERS_LANE = env_bool("DBSPWEB_VERIFY_OWNERS_LANE", VERIFY_WORKERS >= 2)
VERIFY_OWNERS_QUEUE = os.environ.get("VERIFY_OWNERS_QUEUE", f"{VERIFY_QUEUE}.owners")
VERIFY_REFERENCE_MAX_ROWS = int(os.environ.get("VERIFY_REFERENCE_MAX_ROWS", "50000"))
# Explaining a row (runs/explain.py) recomputes the run: in the request for logs of up to
# EXPLAIN_SYNC_MAX_ROWS rows (bench/README.md: about half a second at 20000), on the
# verification queue up to EXPLAIN_MAX_ROWS; larger logs are refused.
EXPLAIN_SYNC_MAX_ROWS = int(os.environ.get("EXPLAIN_SYNC_MAX_ROWS", "20000"))
EXPLAIN_MAX_ROWS = int(os.environ.get("EXPLAIN_MAX_ROWS", "1000000"))
# Node inspections (GET /api/runs/<id>/nodes/<node>/): every node's delta and contents at
# a tick, recomputed once by the reference evaluator on the verification queue's worker
# and stored as Arrow files under INSPECT_DIR (one directory per run, version and tick),
# which the web process pages from: a directory both must see (a shared volume when they
# run on different machines or containers). At most INSPECT_CACHE_MAX_BYTES are kept (the least
# recently read go first); a run whose log holds more than INSPECT_MAX_INPUT_ROWS rows
# up to the tick is not inspected (400).
INSPECT_DIR = Path(os.environ.get("DBSPWEB_INSPECT_DIR", VAR_DIR / "inspect"))
INSPECT_CACHE_MAX_BYTES = int(os.environ.get("DBSPWEB_INSPECT_CACHE_MAX_BYTES", str(2 * 1024**3)))
INSPECT_MAX_INPUT_ROWS = int(os.environ.get("DBSPWEB_INSPECT_MAX_INPUT_ROWS", "2000000"))
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# Task events (what Flower shows): workers send task-received/started/succeeded/failed,
# senders (the web process, the sweeper) task-sent.
CELERY_WORKER_SEND_TASK_EVENTS = True
CELERY_TASK_SEND_SENT_EVENT = True

# --- Spark (used by workers only) -----------------------------------------------------
SPARK_MASTER = os.environ.get("SPARK_MASTER", "local[2]")
SPARK_REMOTE = os.environ.get("SPARK_REMOTE", "")
SPARK_SHUFFLE_PARTITIONS = env_int("SPARK_SHUFFLE_PARTITIONS", 2)
SPARK_DRIVER_HOST = os.environ.get("SPARK_DRIVER_HOST", "")
SPARK_DRIVER_MEMORY = os.environ.get("SPARK_DRIVER_MEMORY", "2g")
SPARK_EXECUTOR_MEMORY = os.environ.get("SPARK_EXECUTOR_MEMORY", "")
SPARK_EXECUTOR_CORES = os.environ.get("SPARK_EXECUTOR_CORES", "")
# Ticks of lookups into Spark-held state a worker runs when it starts, in the background
# (dbsp/spark/warmup.py), so the JVM has compiled that path before a run's first tick;
# 0: none.
SPARK_WARM_UP_TICKS = env_int("DBSPWEB_SPARK_WARM_UP_TICKS", 40)

# --- Runs and pushes --------------------------------------------------------------------
PUSH_MAX_ROWS = env_int("DBSPWEB_PUSH_MAX_ROWS", 100_000)
# SQL / Datalog source text sent to /api/sql/compile/ and /api/datalog/compile/.
MAX_SOURCE_CHARS = env_int("DBSPWEB_MAX_SOURCE_CHARS", 200_000)
# Wall-clock seconds one compile, validate, plan or export request may spend on its
# work (dbsp/budget.py: checked per statement, rule and node); past it, a 400 naming it.
COMPILE_SECONDS = env_float("DBSPWEB_COMPILE_SECONDS", 15.0)
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DBSPWEB_MAX_BODY_BYTES", 50 * 1024 * 1024)
# Bodies carrying a circuit document (validate, plan, circuit create/update, versions):
# dbsp/limits.py bounds a document to about 2,000,000 characters.
MAX_DOCUMENT_BODY_BYTES = env_int("DBSPWEB_MAX_DOCUMENT_BYTES", 8 * 1024 * 1024)
# Objects and arrays nested in any JSON request body (checked before it is parsed).
MAX_JSON_DEPTH = env_int("DBSPWEB_MAX_JSON_DEPTH", 100)
TICK_MAX_PUSHES = env_int("DBSPWEB_TICK_MAX_PUSHES", 100)
# The push lane (runs/api/push_lane.py): plain token-authenticated JSON pushes are logged
# in group commits ahead of Django's request path; 0 sends every push through Django.
PUSH_LANE = env_bool("DBSPWEB_PUSH_LANE", True)
# GET /metrics (Prometheus): a scraper sends `Authorization: Bearer <this>`; empty: only
# signed-in staff users may read it (connectors/api/metrics.py).
METRICS_TOKEN = os.environ.get("DBSPWEB_METRICS_TOKEN", "")
# POST /api/connector-kinds/<kind>/test/ gives up on a client that has not opened in this many seconds.
CONNECTOR_TEST_SECONDS = env_float("DBSPWEB_CONNECTOR_TEST_SECONDS", 15.0)
# Connectors' stored secrets are encrypted with these Fernet keys (comma-separated: the first
# encrypts, all decrypt, for rotation; connectors/secrets.py). Unset: one key derived from SECRET_KEY.
SECRETS_KEYS = [k.strip() for k in os.environ.get("DBSPWEB_SECRETS_KEY", "").split(",") if k.strip()]
# A connector with `on_error: dead_letter` keeps its last this many dead letters (all are counted).
DEAD_LETTERS_KEPT = env_int("DBSPWEB_DEAD_LETTERS_KEPT", 1000)
# Backpressure: a push beyond this many unapplied pushes of a run gets 429 + Retry-After.
MAX_PENDING_PUSHES = env_int("DBSPWEB_MAX_PENDING_PUSHES", 1000)

# --- Workers: leases, heartbeats, the sweeper, engine snapshots (workers/) --------------
# A worker holds a run for LEASE_TTL seconds and renews every HEARTBEAT_EVERY seconds;
# a dead worker's runs are taken over at most LEASE_TTL + SWEEP_EVERY seconds later.
LEASE_TTL = env_float("DBSPWEB_LEASE_TTL", 15.0)
HEARTBEAT_EVERY = env_float("DBSPWEB_HEARTBEAT_EVERY", 3.0)
SWEEP_EVERY = env_float("DBSPWEB_SWEEP_EVERY", 5.0)
# How often a worker's connector pump looks for records when the last pass moved none (workers/pumps.py).
PUMP_EVERY = env_float("DBSPWEB_PUMP_EVERY", 0.2)
# Pushes left unapplied this long under a live holder are re-driven (a wake-up lost
# with the broker, e.g. a Redis restart).
SWEEP_STALE = env_float("DBSPWEB_SWEEP_STALE", 10.0)
# A held run with no push for this many seconds (none waiting) has its input log folded
# into its input tables by its worker (runs/input_tables.py fold_idle).
FOLD_QUIET = env_float("DBSPWEB_FOLD_QUIET", 5.0)
# ... and, never quiet (a change stream), once its unfolded pushes hold more than this many
# rows (issue 27): each push's delete check scans the unfolded pushes' kept row keys.
# 2*10^6 was tried (session 15): the snapshot went faster, but the scan of 10^6+ keys a
# push made the changes' lag grow (bench/README.md, runs D and E).
FOLD_BEHIND_ROWS = env_int("DBSPWEB_FOLD_BEHIND_ROWS", 100_000)
# The delete check keeps the row keys of the unfolded pushes it has read, per process, up
# to this many rows (runs/input_tables.py `_unfolded_keys`; about 50 bytes a row).
DELETE_CHECK_CACHE_ROWS = env_int("DBSPWEB_DELETE_CHECK_CACHE_ROWS", 3_000_000)
# Engine snapshots every N ticks (0 = never; recovery then replays the whole log).
SNAPSHOT_EVERY = env_int("DBSPWEB_SNAPSHOT_EVERY", 100)
SNAPSHOT_DIR = Path(os.environ.get("DBSPWEB_SNAPSHOT_DIR", VAR_DIR / "snapshots"))
SNAPSHOT_KEEP = env_int("DBSPWEB_SNAPSHOT_KEEP", 2)

# Celery worker processes `manage.py run_workers` keeps running (scripts/run, compose):
# one tick at a time each, so a long tick holds up only the runs its own process holds.
WORKERS = env_int("DBSPWEB_WORKERS", 2)

# --- Workers: what one tick may take (workers/watchdog.py, workers/tick_output.py) -----
# A tick running longer than TICK_BUDGET seconds is stopped (its Spark jobs cancelled,
# an exception raised into it) and fails its run naming the node it was in; one still
# running TICK_GRACE seconds later fails its run from the watchdog and the worker
# process exits (a supervisor restarts it).
TICK_BUDGET = env_float("DBSPWEB_TICK_BUDGET", 60.0)
TICK_GRACE = env_float("DBSPWEB_TICK_GRACE", 15.0)
# A tick that did not complete this many times (its worker lost, its commit refused
# with the same error) fails its run instead of being re-driven again.
TICK_MAX_ATTEMPTS = env_int("DBSPWEB_TICK_MAX_ATTEMPTS", 3)
# Rows one node may build in one tick (a join's or product's output, estimated from
# counts of its keys before it is built; any node's output, counted after): beyond, the
# tick fails at once naming the node and the count (dbsp/limits.py, TICK_MAX_ROWS). 5M
# rows is about 1.7 GB at the ~330 bytes a row issue 31's 13M-row product took; 0: no limit.
TICK_MAX_ROWS = env_int("DBSPWEB_TICK_MAX_ROWS", 5_000_000)
# Bytes one node may build in one tick, beside the rows (wide rows): counted as Arrow
# bytes, rows × the schema's row width before a node is built, the Arrow table's own size
# after where it is one (dbsp/limits.py, TICK_MAX_BYTES); beyond, the tick fails naming
# the node and the size. 2 GiB; 0: no limit.
TICK_MAX_BYTES = env_int("DBSPWEB_TICK_MAX_BYTES", 2 * 1024 ** 3)
# The JSON of one tick's output deltas, all views together, at most this many bytes.
TICK_MAX_OUTPUT_BYTES = env_int("DBSPWEB_TICK_MAX_OUTPUT_BYTES", 16 * 1024 * 1024)
# Tests only (never set in a deployment; no user can reach it): "node=seconds,..." makes
# that node's step take so long (sleeping in Python), "node=seconds:stuck" in one
# sleep the watchdog cannot interrupt. Slow ticks by construction for the watchdog's tests.
TEST_SLOW_NODE = os.environ.get("DBSPWEB_TEST_SLOW_NODE", "")

# --- REST framework ----------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_PARSER_CLASSES": [
        "circuits.api.parsers.GuardedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_RENDERER_CLASSES": ["circuits.api.renderers.SafeJSONRenderer", "rest_framework.renderers.BrowsableAPIRenderer"],
    "EXCEPTION_HANDLER": "circuits.api.errors.exception_handler",
    "DEFAULT_THROTTLE_CLASSES": ["circuits.api.throttles.AnonThrottle", "circuits.api.throttles.ShareTokenThrottle"],
    # The client address throttles count by: REMOTE_ADDR with 0; behind N proxies that
    # append to X-Forwarded-For, the address N from its right. Never trust it unproxied.
    "NUM_PROXIES": env_int("DBSPWEB_NUM_PROXIES", 0),
    "DEFAULT_SCHEMA_CLASS": "circuits.api.schema.ErrorBodyAutoSchema",
}
# Request rates (circuits/api/throttles.py): "<n>/<sec|min|hour|day>"; "off" disables one.
# Over a rate: 429 with Retry-After. Counted per client address and web process.
THROTTLE_RATES = {
    "anon": os.environ.get("DBSPWEB_THROTTLE_ANON", "300/min"),
    "share": os.environ.get("DBSPWEB_THROTTLE_SHARE", "60/min"),
    "login": os.environ.get("DBSPWEB_THROTTLE_LOGIN", "10/min"),
    "register": os.environ.get("DBSPWEB_THROTTLE_REGISTER", "20/hour"),
    "validate": os.environ.get("DBSPWEB_THROTTLE_VALIDATE", "60/min"),
}

SPECTACULAR_SETTINGS = {
    "TITLE": "dbspweb API",
    "DESCRIPTION": (
        "Circuits as versioned documents, runs, pushes (JSON change records or CSV) and their output "
        "deltas. Session login for the browser, `Authorization: Token <key>` for scripts. Every 4xx "
        "answer has the body {\"detail\": str, \"errors\": [problem]}. See docs/api.md."
    ),
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": "/api/",
    # Several fields are named `status` (a run's, a push's completion, the health check's):
    # each choice set gets a name of its own rather than a hashed one.
    "ENUM_NAME_OVERRIDES": {"RunStatusEnum": "runs.models.RunStatus",
                            "VerificationStatusEnum": "runs.models.VerificationStatus",
                            "ExplainModeEnum": ["contents", "change", "value"],
                            "VerificationMethodEnum": ["reference", "spark"],
                            # a queued explanation's or a node inspection's
                            "PendingStatusEnum": ["queued", "running", "failed"], "DoneStatusEnum": ["done"],
                            "NodeKindEnum": ["delta", "integral"], "RowSignEnum": ["positive", "negative"]},
    # Swagger UI from the app's own static files, not a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
}

# Debug pages (DJANGO_DEBUG=1) hide settings holding addresses and credentials too.
DEFAULT_EXCEPTION_REPORTER_FILTER = "dbspweb.errors.SettingsHidingFilter"

LOGIN_URL = "/"
CSRF_FAILURE_VIEW = "circuits.api.errors.csrf_failure"  # JSON error body under /api/
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {"py4j": {"level": "WARNING"}, "django.db.backends": {"level": "WARNING"}},
}
