"""docker-compose.yml is the deployment recipe, and no Docker engine runs here: these tests
keep it consistent with the code (services, commands, modules, variables)."""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
VARIABLE = re.compile(r"\bBENCHDASH_[A-Z0-9_]+\b")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return compose["services"]


def argv(service: dict[str, Any]) -> list[str]:
    command = service.get("command", [])
    return command.split() if isinstance(command, str) else list(command)


def option(args: list[str], name: str) -> str:
    """The value of `-X value`, `--name value` or `--name=value` in args."""
    for i, arg in enumerate(args):
        if arg == name:
            return args[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    raise AssertionError(f"{name} not in {args}")


def strings(node: Any) -> list[str]:
    """Every key and string value in the YAML tree."""
    if isinstance(node, dict):
        return [s for k, v in node.items() for s in [str(k), *strings(v)]]
    if isinstance(node, list):
        return [s for v in node for s in strings(v)]
    return [node] if isinstance(node, str) else []


def settings_variables() -> set[str]:
    source = (ROOT / "benchdash" / "settings.py").read_text()
    return set(re.findall(r"[\"'](BENCHDASH_[A-Z0-9_]+)[\"']", source))


def module_exists(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def test_it_has_every_part_of_the_design(compose):
    assert {
        "postgres",
        "redis",
        "demo-mariadb",
        "loadhost",
        "web",
        "worker",
        "housekeeper",
        "beat",
    } <= set(services(compose))


def test_the_demo_mariadb_logs_binary_so_that_sync_binlog_matters(compose):
    demo = services(compose)["demo-mariadb"]
    assert demo["image"].startswith("mariadb:")
    assert any(a.startswith("--log-bin") for a in argv(demo))
    assert any(a.startswith("--server-id") for a in argv(demo))


def test_the_demo_mariadb_lets_bench_read_the_fsync_timers_of_performance_schema(compose):
    # as scripts/demo-mariadb does for `make start` (tests/test_demo_mariadb.py)
    assert "--performance-schema=ON" in argv(services(compose)["demo-mariadb"])
    grants = compose["configs"]["demo-mariadb-grants"]["content"]
    assert "GRANT SELECT ON performance_schema.* TO 'bench'@'%';" in grants


def test_the_loadhost_image_has_sshd_and_sysbench(compose):
    context = ROOT / services(compose)["loadhost"]["build"]
    dockerfile = (context / "Dockerfile").read_text()
    assert "openssh-server" in dockerfile
    assert "sysbench" in dockerfile
    assert "sshd" in dockerfile


def test_web_serves_the_asgi_application_with_uvicorn(compose):
    args = argv(services(compose)["web"])
    assert args[:3] == ["python", "-m", "benchdash.serve"]
    assert module_exists("benchdash.serve")
    serve = (ROOT / "benchdash" / "serve.py").read_text()
    assert 'APP = "benchdash.asgi:application"' in serve and "import uvicorn" in serve
    assert "application" in (ROOT / "benchdash" / "asgi.py").read_text()


def test_benchmarks_run_one_at_a_time_in_the_workers_own_process(compose):
    args = argv(services(compose)["worker"])
    assert args[:4] == ["celery", "-A", "benchdash", "worker"]
    assert option(args, "-Q") == "benchmarks"
    assert option(args, "--pool") == "solo"
    assert module_exists("benchdash.celery")


def test_housekeeping_has_a_worker_of_its_own(compose):
    args = argv(services(compose)["housekeeper"])
    assert args[:4] == ["celery", "-A", "benchdash", "worker"]
    assert option(args, "-Q") == "celery"
    assert set(settings_queues()) == {"benchmarks", "celery", "drivers"}


def test_the_drivers_of_cells_from_several_hosts_have_a_worker_with_threads(compose):
    args = argv(services(compose)["drivers"])
    assert args[:4] == ["celery", "-A", "benchdash", "worker"]
    assert option(args, "-Q") == "drivers"
    assert option(args, "--pool") == "threads"
    start = (ROOT / "scripts" / "start").read_text()
    assert "-Q drivers --pool=threads" in start


def settings_queues() -> list[str]:
    from django.conf import settings

    return [*{r["queue"] for r in settings.CELERY_TASK_ROUTES.values()}, "celery"]


def test_the_worker_queue_names_match_the_task_routes():
    from django.conf import settings

    routed = {route["queue"] for route in settings.CELERY_TASK_ROUTES.values()}
    assert routed <= {"benchmarks", "celery", "drivers"}


def test_beat_uses_the_database_scheduler(compose):
    args = argv(services(compose)["beat"])
    assert args[:4] == ["celery", "-A", "benchdash", "beat"]
    scheduler = option(args, "--scheduler")
    module, name = scheduler.split(":")
    assert hasattr(importlib.import_module(module), name)


def test_the_migrate_step_runs_commands_that_exist(compose):
    from django.core.management import get_commands

    script = " ".join(argv(services(compose)["migrate"]))
    used = re.findall(r"manage\.py (\w+)", script)
    assert "migrate" in used
    assert set(used) <= set(get_commands())


def test_every_benchdash_variable_in_compose_is_read_by_the_settings(compose):
    # What the containers get; a variable compose itself reads into a command (the number
    # of web workers) is documented in docs/configuration.md instead.
    passed = {
        v for s in strings(compose["x-benchdash"]["environment"]) for v in VARIABLE.findall(s)
    }
    assert passed, "compose passes no BENCHDASH_* variable at all"
    assert passed <= settings_variables(), passed - settings_variables()
    commands = [" ".join(argv(service)) for service in services(compose).values()]
    documented = (ROOT / "docs" / "configuration.md").read_text()
    for variable in {v for c in commands for v in VARIABLE.findall(c)}:
        assert f"`{variable}`" in documented, variable


def test_web_runs_several_worker_processes_counted_from_the_environment(compose):
    args = argv(services(compose)["web"])
    workers = re.fullmatch(r"\$\{BENCHDASH_WEB_WORKERS:-(\d+)\}", option(args, "--workers"))
    assert workers and int(workers[1]) >= 2
    start = (ROOT / "scripts" / "start").read_text()
    assert 'WEB_WORKERS="${BENCHDASH_WEB_WORKERS:-$(nproc)}"' in start
    assert re.search(r"-m benchdash\.serve[^\n]*\\\n[^\n]*--workers \"\$WEB_WORKERS\"", start)


def test_web_worker_and_beat_share_one_configuration(compose):
    web, worker, beat = (services(compose)[n] for n in ("web", "worker", "beat"))
    assert web["environment"] == worker["environment"] == beat["environment"]
    assert web["environment"]["BENCHDASH_REDIS_URL"].startswith("redis://redis:")
    assert web["environment"]["BENCHDASH_DB_HOST"] == "postgres"


def test_the_app_image_is_python_with_sysbench_and_the_npm_packages():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "FROM python:3.11-slim" in dockerfile
    assert "sysbench" in dockerfile
    assert "npm ci" in dockerfile
    assert "requirements.txt" in dockerfile
