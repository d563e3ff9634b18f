# Shared setup steps for scripts/run and scripts/test (sourced, not run).
# Each step is idempotent and fast when there is nothing to do.

say() { printf '\033[1m[dbspweb]\033[0m %s\n' "$*"; }
die() { printf '\033[1;31m[dbspweb] error:\033[0m %s\n' "$*" >&2; exit 1; }

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
VAR="$ROOT/var"
mkdir -p "$VAR"

can_install() {  # may we use the system package manager?
  [ "${DBSPWEB_NO_INSTALL:-0}" != "1" ] && command -v apt-get >/dev/null 2>&1 &&
    { [ "$(id -u)" = 0 ] || command -v sudo >/dev/null 2>&1; }
}

apt_install() {  # apt_install PACKAGE... (runs apt-get update once per script)
  local sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  if [ -z "${_APT_UPDATED:-}" ]; then $sudo apt-get update -qq >/dev/null; _APT_UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

python_ok() { "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; }

find_python() {  # sets PY to a Python >= 3.12 (Django 6 and PyDBSP need it)
  local c
  for c in "${PYTHON:-}" python3.13 python3.12 python3.14 python3 \
           "$HOME"/.pyenv/versions/3.1[2-9]*/bin/python; do
    [ -n "$c" ] || continue
    if command -v "$c" >/dev/null 2>&1 && python_ok "$c"; then PY="$(command -v "$c")"; return 0; fi
  done
  die "dbspweb needs Python 3.12 or newer (Django 6, PyDBSP) and none was found.
  Install one (e.g. 'apt-get install python3.12 python3.12-venv', 'pyenv install 3.13',
  or from python.org), or point PYTHON=/path/to/python3.12 at it, then run this again."
}

ensure_java() {  # PySpark needs a Java 17+ runtime
  if command -v java >/dev/null 2>&1; then return 0; fi
  if can_install; then say "installing a Java runtime for Spark (openjdk-17-jre-headless)"; apt_install openjdk-17-jre-headless
  else die "Spark needs Java 17 or newer: install a JRE (e.g. 'apt-get install openjdk-17-jre-headless') and run this again."; fi
}

ensure_venv() {  # ensure_venv REQUIREMENTS_FILE
  local req="$1" stamp
  find_python
  if [ -x "$VENV/bin/python" ] && ! python_ok "$VENV/bin/python"; then
    say "recreating .venv (it has Python < 3.12)"; rm -rf "$VENV"
  elif [ -e "$VENV" ] && ! "$VENV/bin/python" -m pip --version >/dev/null 2>&1; then
    say "recreating .venv (an earlier setup was interrupted: it has no pip)"; rm -rf "$VENV"
  fi
  if [ ! -x "$VENV/bin/python" ]; then
    say "creating .venv with $PY ($("$PY" --version))"
    "$PY" -m venv "$VENV" || die "could not create a virtualenv with $PY (on Debian: apt-get install python3-venv)"
  fi
  stamp="$(cat "$ROOT/constraints.txt" "$ROOT/requirements.txt" "$ROOT/$req" | sha256sum | cut -c1-16)"
  if [ "$(cat "$VENV/.installed-$req" 2>/dev/null)" != "$stamp" ]; then
    say "installing Python packages from $req"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$ROOT/$req" ||
      die "pip install -r $req failed (see above)"
    echo "$stamp" > "$VENV/.installed-$req"
  fi
  export PATH="$VENV/bin:$PATH"
}

ensure_frontend() {  # npm ci when the lock file changed, then a production build
  command -v npm >/dev/null 2>&1 || die "the frontend needs Node.js 20.19+ and npm: install them (https://nodejs.org or your package manager) and run this again."
  local stamp; stamp="$(sha256sum "$ROOT/frontend/package-lock.json" | cut -c1-16)"
  if [ ! -d "$ROOT/frontend/node_modules" ] || [ "$(cat "$ROOT/frontend/node_modules/.installed" 2>/dev/null)" != "$stamp" ]; then
    say "installing frontend packages (npm ci)"
    (cd "$ROOT/frontend" && npm ci --no-audit --no-fund --loglevel=error) || die "npm ci failed (see above)"
    echo "$stamp" > "$ROOT/frontend/node_modules/.installed"
  fi
  say "building the frontend"
  (cd "$ROOT/frontend" && npm run --silent build >"$VAR/frontend-build.log" 2>&1) ||
    { cat "$VAR/frontend-build.log"; die "the frontend build failed (see above)"; }
}

free_port() { "$VENV/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

STARTED_PIDS=()
STOP_COMMANDS=()  # commands that stop what was started as a daemon (run once, before the pids are signalled)
stop_started() {
  local pid command
  for command in "${STOP_COMMANDS[@]}"; do eval "$command" >/dev/null 2>&1 || true; done
  STOP_COMMANDS=()
  for pid in "${STARTED_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${STARTED_PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  STARTED_PIDS=()
}

ensure_redis() {  # use REDIS_URL, or start a private redis-server; exports REDIS_URL
  if [ -n "${REDIS_URL:-}" ]; then
    say "using Redis at $REDIS_URL"
    "$VENV/bin/python" -c "import redis,sys; redis.Redis.from_url(sys.argv[1]).ping()" "$REDIS_URL" 2>/dev/null ||
      die "REDIS_URL=$REDIS_URL does not answer PING: start that Redis, or unset REDIS_URL to let dbspweb start its own."
    return 0
  fi
  if ! command -v redis-server >/dev/null 2>&1; then
    if can_install; then say "installing redis-server"; apt_install redis-server
    else die "Redis is needed (Celery broker, websocket fan-out). Either set REDIS_URL=redis://host:6379/0
  to use one you run, or install redis-server (e.g. 'apt-get install redis-server', 'brew install redis') and run this again."; fi
  fi
  local port dir="$1"; port="$(free_port)"
  mkdir -p "$dir"
  # appendonly: the broker survives a restart (acknowledged pushes are also in the database).
  redis-server --bind 127.0.0.1 --port "$port" --dir "$dir" --appendonly yes --save "" \
    --logfile "$dir/redis.log" --daemonize no >/dev/null 2>&1 &
  STARTED_PIDS+=("$!")
  export REDIS_URL="redis://127.0.0.1:$port/0"
  for _ in $(seq 50); do
    "$VENV/bin/python" -c "import redis,sys; redis.Redis.from_url(sys.argv[1]).ping()" "$REDIS_URL" 2>/dev/null && { say "started redis-server on port $port"; return 0; }
    sleep 0.2
  done
  die "redis-server did not start (log: $dir/redis.log)"
}

ensure_demo_postgres() {  # ensure_demo_postgres DIR: a PostgreSQL with wal_level=logical for the PostgreSQL
  # demo (made in DIR and kept between runs; dbspweb/local_postgres.py), stopped at exit. Exports
  # DBSPWEB_DEMO_POSTGRES_URL (its superuser's URL) and DBSPWEB_DEMO_PG_PASSWORD (the demo role's
  # password, kept in var/; the workers read it, the circuit names it in secrets_env), or
  # DBSPWEB_DEMO_POSTGRES_UNAVAILABLE saying why there is none (the demo is seeded anyway).
  local dir="$1" out secret="$VAR/demo-postgres-password"
  if [ "$(id -u)" = 0 ] && id postgres >/dev/null 2>&1 && ! runuser -u postgres -- test -x "$(dirname "$dir")" 2>/dev/null; then
    # as root the server runs as the postgres user, which cannot reach var/ here (e.g. a checkout under /root)
    dir="/var/tmp/dbspweb-postgres-$(printf '%s' "$ROOT" | sha256sum | cut -c1-12)"
  fi
  [ -s "$secret" ] || (umask 077; "$VENV/bin/python" -c 'import secrets; print(secrets.token_urlsafe(18))' >"$secret")
  export DBSPWEB_DEMO_PG_PASSWORD="${DBSPWEB_DEMO_PG_PASSWORD:-$(cat "$secret")}"
  if [ -n "${DBSPWEB_DEMO_POSTGRES_URL:-}" ]; then say "using the demo PostgreSQL at $DBSPWEB_DEMO_POSTGRES_URL"; return 0; fi
  if ! compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null && can_install; then
    say "installing PostgreSQL for the PostgreSQL demo"; apt_install postgresql || true
  fi
  if out="$(DBSPWEB_NO_INSTALL=1 "$VENV/bin/python" -m dbspweb.local_postgres start "$dir" 2>&1)"; then
    export DBSPWEB_DEMO_POSTGRES_URL="$out"
    STOP_COMMANDS+=("'$VENV/bin/python' -m dbspweb.local_postgres stop '$dir'")
    say "PostgreSQL for the demo (wal_level=logical) on $out"
  else
    export DBSPWEB_DEMO_POSTGRES_UNAVAILABLE="PostgreSQL could not be started: $(printf '%s' "$out" | tail -n 3 | tr '\n' ' ')"
    say "no PostgreSQL for the demo ($DBSPWEB_DEMO_POSTGRES_UNAVAILABLE); its circuit is seeded anyway"
  fi
}
