# syntax=docker/dockerfile:1
# The benchdash image: web (uvicorn, through benchdash/serve.py), worker and beat (celery) run from it; see
# docker-compose.yml. Debian 12, like the machines benchdash is developed and tested on.

FROM python:3.11-slim-bookworm AS build
RUN apt-get update \
    && apt-get install -y --no-install-recommends build-essential pkg-config libmariadb-dev \
        nodejs npm \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY requirements.txt requirements-nodeps.txt ./
RUN pip wheel --no-cache-dir --wheel-dir /wheels -r requirements.txt \
    && pip wheel --no-cache-dir --no-deps --wheel-dir /wheels -r requirements-nodeps.txt
COPY package.json package-lock.json ./
# The browser packages only: the dev dependencies (ESLint, TypeScript) lint the checkout.
RUN npm ci --omit=dev --no-audit --no-fund

FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    BENCHDASH_VAR_DIR=/var/lib/benchdash
# sysbench for the built-in `local` load host; the ssh client for remote load hosts.
RUN apt-get update \
    && apt-get install -y --no-install-recommends libmariadb3 sysbench openssh-client \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /wheels /wheels
# --no-deps: /wheels holds every dependency already (requirements-nodeps.txt says why).
RUN pip install --no-cache-dir --no-deps /wheels/* && rm -rf /wheels
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY . .
# Static files are collected at build time; the keys given here serve only this step.
RUN BENCHDASH_SECRET_KEY=collectstatic BENCHDASH_ENCRYPTION_KEYS=unused \
    python manage.py collectstatic --noinput \
    && useradd --system --home-dir /var/lib/benchdash benchdash \
    && install -d -m 700 -o benchdash -g benchdash /var/lib/benchdash
USER benchdash
EXPOSE 8000
CMD ["python", "-m", "benchdash.serve", "--host", "0.0.0.0", "--port", "8000"]
