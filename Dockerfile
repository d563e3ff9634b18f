# dbspweb: one image for the web server (uvicorn, ASGI: HTTP + websockets) and the
# Celery workers (PySpark driver). compose.yaml picks the role with `command:`.

# ---- Stage 1: build the frontend (TypeScript/Vite) into frontend/dist ----------------------
FROM node:20-bookworm-slim AS frontend
WORKDIR /app/frontend
# Manifest + lockfile first so the npm ci layer is cached until dependencies change.
COPY frontend/package.json frontend/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY frontend/ ./
RUN npm run build

# ---- Stage 2: the Python app --------------------------------------------------------------
FROM python:3.13-slim-bookworm

ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# Java 17 JRE for PySpark's driver JVM (py4j gateway). The man1 dir must exist on slim
# images or the JRE's update-alternatives step fails. JAVA_HOME is made arch-independent
# by a symlink to wherever Debian put the JRE (java-17-openjdk-amd64, -arm64, ...).
RUN set -eux; \
    mkdir -p /usr/share/man/man1; \
    apt-get update; \
    apt-get install -y --no-install-recommends openjdk-17-jre-headless procps; \
    rm -rf /var/lib/apt/lists/*; \
    ln -s "$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")" /usr/lib/jvm/java-17; \
    /usr/lib/jvm/java-17/bin/java -version
ENV JAVA_HOME=/usr/lib/jvm/java-17

# Non-root runtime user.
RUN groupadd --system --gid 10001 app \
    && useradd --system --uid 10001 --gid app --create-home --home-dir /home/app app

WORKDIR /app

# Dependencies first (pinned) for layer caching.
COPY requirements.txt ./
RUN pip install -r requirements.txt

# The app, then the built frontend from stage 1. Code stays root-owned (read-only for
# the app user); only var/ (SQLite default, STATIC_ROOT = var/static) is writable.
COPY . .
COPY --from=frontend /app/frontend/dist /app/frontend/dist
RUN mkdir -p /app/var/snapshots && chown -R app:app /app/var

USER app

EXPOSE 8000

# Default role: the web server. The worker overrides this with its celery command.
CMD ["uvicorn", "dbspweb.asgi:application", "--host", "0.0.0.0", "--port", "8000"]
