"""Static checks of the deployment files (compose.yaml, Dockerfile, .dockerignore).

No Docker engine is needed and no database is touched: the files are parsed and the
wiring between services is checked, so a broken edit fails here instead of at deploy time.
"""
import json
import re
import shlex
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

pytestmark = pytest.mark.one_backend  # its subject does not depend on the database: run once, on SQLite

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = ROOT / "compose.yaml"
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
REQUIREMENTS = ROOT / "requirements.txt"

EXPECTED_SERVICES = {"web", "worker", "verify-worker", "redis", "postgres", "spark-master", "spark-worker"}
APP_SERVICES = ("web", "worker", "verify-worker")
ASGI_APP = "dbspweb.asgi:application"

_INTERPOLATION = re.compile(r"\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?-)(?P<default>[^}]*))?\}")


def _interpolate(value: str) -> str:
    """Resolve compose `${VAR:-default}` / `${VAR-default}` to the default (the environment
    of the test run is deliberately ignored, so the check is about the file alone)."""
    return _INTERPOLATION.sub(lambda m: m.group("default") or "", str(value))


@pytest.fixture(scope="module")
def compose() -> dict:
    data = yaml.safe_load(COMPOSE.read_text())
    assert isinstance(data, dict) and isinstance(data.get("services"), dict), "compose.yaml has no services mapping"
    return data


@pytest.fixture(scope="module")
def services(compose) -> dict:
    return compose["services"]


def _env(service: dict) -> dict:
    """A service's environment as a dict (compose allows a mapping or a list of K=V)."""
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) if "=" in item else (item, "") for item in env)
    return {str(k): _interpolate(v) for k, v in env.items()}


def _command_tokens(service: dict) -> list[str]:
    cmd = service.get("command")
    assert cmd, "service has no command"
    if isinstance(cmd, str):
        return shlex.split(cmd)
    tokens = []
    for part in cmd:
        tokens.extend(shlex.split(str(part)))  # `sh -c "a && b"` arrives as one item
    return tokens


def _depends_on(service: dict) -> dict:
    deps = service.get("depends_on") or {}
    if isinstance(deps, list):
        return {name: {"condition": "service_started"} for name in deps}
    return {name: (spec or {}) for name, spec in deps.items()}


def _build_context(service: dict):
    build = service.get("build")
    if build is None:
        return None
    if isinstance(build, str):
        return (Path(build), "Dockerfile")
    return (Path(build.get("context", ".")), build.get("dockerfile", "Dockerfile"))


# --- services -------------------------------------------------------------------------------

def test_exactly_the_expected_services(services):
    assert set(services) == EXPECTED_SERVICES, (
        f"missing: {sorted(EXPECTED_SERVICES - set(services))}, "
        f"unexpected: {sorted(set(services) - EXPECTED_SERVICES)}"
    )


def test_web_and_worker_build_the_same_image(services):
    web, worker = services["web"], services["worker"]
    assert _build_context(web) is not None, "web must be built from the repo's Dockerfile"
    assert _build_context(web) == _build_context(worker), "web and worker must build the same image"
    context, dockerfile = _build_context(web)
    assert (ROOT / context).resolve() == ROOT, "the build context must be the repo root"
    assert (ROOT / context / dockerfile).is_file(), dockerfile
    assert web.get("image") == worker.get("image"), "web and worker must tag the same image"


def test_worker_runs_celery_with_a_non_forking_pool(services):
    tokens = _command_tokens(services["worker"])
    if tokens[:3] == ["python", "manage.py", "run_workers"]:  # the command's workers: what it starts
        from workers.management.commands.run_workers import celery_command

        tokens = celery_command()
    assert tokens[0] == "celery" and "worker" in tokens, tokens
    app = tokens[tokens.index("-A") + 1] if "-A" in tokens else None
    assert app == "dbspweb" or "--app=dbspweb" in tokens, tokens
    pool = None
    for i, tok in enumerate(tokens):
        if tok.startswith("--pool="):
            pool = tok.split("=", 1)[1]
        elif tok in ("--pool", "-P") and i + 1 < len(tokens):
            pool = tokens[i + 1]
        elif tok.startswith("-P") and len(tok) > 2:
            pool = tok[2:]
    # The py4j gateway to Spark's JVM is not fork-safe: the default prefork pool breaks it.
    assert pool in {"solo", "threads"}, f"worker pool must be solo or threads, got {pool!r}"


@pytest.mark.parametrize("name", APP_SERVICES)
def test_app_services_point_at_the_backing_services(services, name):
    env = _env(services[name])

    db = urlsplit(env["DATABASE_URL"])
    assert db.scheme in {"postgres", "postgresql"}, env["DATABASE_URL"]
    assert db.hostname == "postgres" and db.hostname in services
    assert db.port in (None, 5432)

    redis = urlsplit(env["REDIS_URL"])
    assert redis.scheme == "redis", env["REDIS_URL"]
    assert redis.hostname == "redis" and redis.hostname in services
    assert redis.port in (None, 6379)

    spark = urlsplit(env["SPARK_MASTER"])
    assert spark.scheme == "spark", env["SPARK_MASTER"]
    assert spark.hostname == "spark-master" and spark.hostname in services
    assert spark.port == 7077

    assert env.get("DJANGO_SECRET_KEY"), "DJANGO_SECRET_KEY must be set (settings refuse to start without it)"
    assert env.get("DJANGO_DEBUG") in {"0", "false", "False", "no", "off"}


def test_app_services_share_one_configuration(services):
    web_env, worker_env = _env(services["web"]), _env(services["worker"])
    for key in ("DATABASE_URL", "REDIS_URL", "DJANGO_SECRET_KEY", "SPARK_MASTER", "SPARK_SHUFFLE_PARTITIONS"):
        assert web_env.get(key) == worker_env.get(key), key


def test_the_verify_worker_consumes_the_verification_queue_and_shares_inspections_with_web(services):
    """Verifications, inspections and queued explanations go to VERIFY_QUEUE
    (`<CELERY_QUEUE>.verify`); the inspections it writes are paged by the web server."""
    from django.conf import settings

    tokens = _command_tokens(services["verify-worker"])
    assert tokens[:2] == ["celery", "-A"] and "--pool=solo" in tokens, tokens
    queue = tokens[tokens.index("-Q") + 1]
    assert queue == f"{_env(services['worker']).get('CELERY_QUEUE', 'dbspweb')}.verify"
    assert settings.VERIFY_QUEUE.endswith(".verify")
    web_dir, verify_dir = _env(services["web"])["DBSPWEB_INSPECT_DIR"], _env(services["verify-worker"])["DBSPWEB_INSPECT_DIR"]
    assert web_dir == verify_dir
    mounts = lambda name: {v.split(":")[1]: v.split(":")[0] for v in services[name].get("volumes", [])}  # noqa: E731
    assert mounts("web")[web_dir] == mounts("verify-worker")[verify_dir], "web and verify-worker must share the inspections volume"
    for key in ("DATABASE_URL", "REDIS_URL", "DJANGO_SECRET_KEY", "SPARK_MASTER"):
        assert _env(services["verify-worker"]).get(key) == _env(services["web"]).get(key), key


def test_spark_driver_host_is_the_worker(services):
    # Executors connect back to the driver, which runs in the worker container.
    assert _env(services["worker"]).get("SPARK_DRIVER_HOST") == "worker"


def test_spark_worker_joins_the_master_the_app_uses(services):
    master_url = _env(services["worker"])["SPARK_MASTER"]
    assert "org.apache.spark.deploy.master.Master" in _command_tokens(services["spark-master"])
    worker_cmd = _command_tokens(services["spark-worker"])
    assert "org.apache.spark.deploy.worker.Worker" in worker_cmd
    assert master_url in worker_cmd


def test_every_depends_on_names_an_existing_service(services):
    for name, service in services.items():
        for dep, spec in _depends_on(service).items():
            assert dep in services, f"{name} depends on unknown service {dep!r}"
            assert dep != name, f"{name} depends on itself"
            if spec.get("condition") == "service_healthy":
                assert services[dep].get("healthcheck"), f"{name} waits for {dep} healthy, but {dep} has no healthcheck"


def test_web_waits_for_healthy_database_and_broker(services):
    deps = _depends_on(services["web"])
    for dep in ("postgres", "redis"):
        assert deps.get(dep, {}).get("condition") == "service_healthy", dep
    assert {"postgres", "redis", "spark-master"} <= set(_depends_on(services["worker"]))


def test_database_url_credentials_match_postgres(services):
    pg = _env(services["postgres"])
    for name in APP_SERVICES:
        db = urlsplit(_env(services[name])["DATABASE_URL"])
        assert db.username == pg["POSTGRES_USER"], name
        assert db.password == pg["POSTGRES_PASSWORD"], name
        assert db.path.lstrip("/") == pg["POSTGRES_DB"], name


def test_stateful_services_keep_data_in_named_volumes(compose, services):
    declared = set(compose.get("volumes") or {})
    for name, target in (("postgres", "/var/lib/postgresql/data"), ("redis", "/data")):
        mounts = [str(v).split(":") for v in services[name].get("volumes", [])]
        sources = [m[0] for m in mounts if len(m) >= 2 and m[1] == target]
        assert sources and sources[0] in declared, f"{name} must mount a named volume at {target}"
    assert "--appendonly" in _command_tokens(services["redis"])


def test_spark_cluster_runs_the_pinned_pyspark(services):
    """Driver (the worker's PySpark) and executors must run the same Spark version: the
    cluster services run the app image, whose Spark is the pip-installed pinned pyspark."""
    assert re.search(r"^pyspark==\d+\.\d+\.\d+$", REQUIREMENTS.read_text(), re.M), "pyspark is not pinned"
    app_image = services["worker"]["image"]
    for name in ("spark-master", "spark-worker"):
        assert services[name]["image"] == app_image, f"{name} must run the app image {app_image}"
        assert _command_tokens(services[name])[0] == "spark-class"


# --- Dockerfile and the web entry point ----------------------------------------------------

def _dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, with line continuations joined and comments dropped."""
    logical, current = [], ""
    for raw in DOCKERFILE.read_text().splitlines():
        line = raw.strip()
        if not current and (not line or line.startswith("#")):
            continue
        if current and line.startswith("#"):
            continue
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        current += line
        if current.strip():
            instr, _, args = current.strip().partition(" ")
            logical.append((instr.upper(), args.strip()))
        current = ""
    return logical


def _final_stage() -> list[tuple[str, str]]:
    instructions = _dockerfile_instructions()
    last_from = max(i for i, (instr, _) in enumerate(instructions) if instr == "FROM")
    return instructions[last_from:]


def _exec_or_shell(args: str) -> list[str]:
    return json.loads(args) if args.startswith("[") else shlex.split(args)


def test_dockerfile_default_command_serves_the_asgi_app():
    stage = _final_stage()
    entry = [a for i, a in stage if i == "ENTRYPOINT"]
    cmd = [a for i, a in stage if i == "CMD"]
    assert cmd or entry, "the final stage has no CMD/ENTRYPOINT"
    argv = (_exec_or_shell(entry[-1]) if entry else []) + (_exec_or_shell(cmd[-1]) if cmd else [])
    assert "uvicorn" in argv and ASGI_APP in argv, argv


def test_compose_web_command_migrates_then_serves_the_asgi_app(services):
    command = " ".join(_command_tokens(services["web"]))
    assert ASGI_APP in command
    migrate, collect, serve = (command.find(s) for s in ("migrate", "collectstatic", "uvicorn"))
    assert -1 < migrate < serve and -1 < collect < serve, command


def test_dockerfile_final_image_is_python_with_java_frontend_and_non_root_user():
    stage = _final_stage()
    base = stage[0][1].split()[0]
    assert base.startswith("python:3.13"), base
    runs = " ".join(a for i, a in stage if i == "RUN")
    assert "openjdk-17-jre-headless" in runs
    assert any(i == "COPY" and "--from=" in a and "frontend/dist" in a for i, a in stage), "frontend/dist not copied"
    users = [a for i, a in stage if i == "USER"]
    assert users and users[-1].split(":")[0] not in {"root", "0"}, "the image must run as a non-root user"
    assert ("ENV", "PYTHONUNBUFFERED=1") in stage or any(
        i == "ENV" and re.search(r"\bPYTHONUNBUFFERED=1\b", a) for i, a in stage
    )


def test_dockerignore_keeps_host_artifacts_out_of_the_context():
    entries = {line.strip().rstrip("/") for line in DOCKERIGNORE.read_text().splitlines()
               if line.strip() and not line.startswith("#")}
    for needed in (".venv", ".git", "frontend/dist", "var"):
        assert needed in entries, needed
    assert entries & {"node_modules", "**/node_modules", "frontend/node_modules"}
    assert not entries & {"requirements.txt", "Dockerfile", "manage.py", "dbspweb"}
