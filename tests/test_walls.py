"""What no layer may do, whatever its place in the order tests/test_architecture.py holds.

The layers say which way imports run; these walls say what a room never does even where an
import would be allowed:

- the executor rooms (runs/loadhosts, runs/targets, and the pure sysbench and analysis)
  save no model row: they read the rows handed to them and return plain values; the
  services and the worker keep what they found;
- the pages and the API never open SSH: they import nothing of runs/loadhosts nor an SSH
  library, and call a service that does;
- the API never imports the pages' helpers, nor the pages the API's: what both need to
  speak HTTP is in runs/http/;
- nothing under runs/ imports the project package (benchdash/): services send tasks by
  name through Celery's current app.

And one word per thing: "answer" is a verdict (docs/answers.md), so the code that builds
HTTP responses says "response"; a load host is a load host in the pages' URLs, the API's
and the docs; a "step" is a change point of the nightly history, and only there.

Read with `ast`, as the architecture test reads imports: nothing here runs the code.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.urls import reverse

from tests.test_architecture import APP, ROOT, imports_of, modules, part, third_party_imports

EXECUTOR_ROOMS = {"loadhosts", "targets", "sysbench", "analysis"}
PAGES_AND_API = {"web", "api", "http"}
SSH_LIBRARIES = {"paramiko", "asyncssh", "fabric"}

# Django's ways to write a row, on a model, a manager or a queryset.
ROW_WRITES = {
    "save",
    "delete",
    "create",
    "get_or_create",
    "update_or_create",
    "bulk_create",
    "bulk_update",
    "update",
}


def _related_names() -> set[str]:
    """The names a row reaches other rows by (`batch.runs`), from runs/models.py:
    each `related_name=` given, and Django's `<model>_set` for the others."""
    tree = ast.parse((APP / "models.py").read_text())
    return {
        keyword.value.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        for keyword in node.keywords
        if keyword.arg == "related_name"
        and isinstance(keyword.value, ast.Constant)
        and isinstance(keyword.value.value, str)
        and keyword.value.value != "+"
    }


def database_touches(source: str, related: set[str]) -> list[str]:
    """Where `source` reaches the database to write, or could: a manager (`X.objects`),
    Django's database package, a row's `save()`/`delete()`/`create()`..., and any of those
    or `update()` on a related manager (`batch.runs.update(...)`). A plain `.update()` is
    a dict's: a queryset can only be reached through a manager or a related name, which
    are both seen."""
    found = []
    for node in ast.walk(ast.parse(source)):
        said = f"{getattr(node, 'lineno', 0)}: "
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("django.db"):
            found.append(said + f"imports {node.module}")
        elif isinstance(node, ast.Import) and any(
            a.name.startswith("django.db") for a in node.names
        ):
            found.append(said + "imports django.db")
        elif isinstance(node, ast.Attribute) and node.attr == "objects":
            found.append(said + f"{ast.unparse(node)} (a manager)")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            method, receiver = node.func.attr, node.func.value
            through_related = isinstance(receiver, ast.Attribute) and (
                receiver.attr in related or receiver.attr.endswith("_set")
            )
            if method in ROW_WRITES - {"update"} or (method == "update" and through_related):
                found.append(said + ast.unparse(node.func))
    return found


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("load_host.save(update_fields=['host_key'])", ["1: load_host.save"]),
        ("LoadHost.objects.filter(pk=1).update(facts={})", ["1: LoadHost.objects (a manager)"]),
        ("batch.runs.update(status='x')", ["1: batch.runs.update"]),
        ("run.samples.create(seq=1)", ["1: run.samples.create"]),
        ("from django.db import transaction", ["1: imports django.db"]),
        ("values.update({'a': 1})\nfacts = host.facts\nreturn_ = load_host.name", []),
    ],
)
def test_the_scan_sees_a_write_to_the_database(source: str, expected: list[str]) -> None:
    assert database_touches(source, _related_names()) == expected


def _modules_of(rooms: set[str]) -> Iterator[tuple[str, Path]]:
    for module, path in modules().items():
        if part(module) in rooms:
            yield module, path


def test_the_executor_rooms_save_no_row() -> None:
    """SSH, sysbench and a target's SQL run in these rooms; the rows they learn about
    are kept by the services (runs/services/loadhosts.py) and the worker (runs/execution/)."""
    related = _related_names()
    writes = [
        f"{path.relative_to(ROOT)}:{touch}"
        for _, path in _modules_of(EXECUTOR_ROOMS)
        for touch in database_touches(path.read_text(), related)
    ]
    assert writes == [], "return plain values and let a service keep them:\n" + "\n".join(writes)


def test_pages_and_api_never_open_ssh() -> None:
    opened = [
        f"{module} → {imported}"
        for module, _ in _modules_of(PAGES_AND_API)
        for imported in imports_of(module)
        if part(imported) == "loadhosts"
    ]
    opened += [
        f"{module} → {library}"
        for module, _ in _modules_of(PAGES_AND_API)
        for library in sorted(third_party_imports(module) & SSH_LIBRARIES)
    ]
    assert opened == [], "call a service (runs/services/loadhosts.py):\n" + "\n".join(opened)


def test_the_api_and_the_pages_share_only_runs_http() -> None:
    crossed = [
        f"{module} → {imported}"
        for module, _ in _modules_of(PAGES_AND_API)
        for imported in imports_of(module)
        if {part(module), part(imported)} == {"web", "api"}
        or (part(module) == "http" and part(imported) in {"web", "api"})
    ]
    assert crossed == [], "move what both use to runs/http/:\n" + "\n".join(crossed)


# A module of runs/ that must import the project package, and why. None must today.
IMPORTS_THE_PROJECT: dict[str, str] = {}


def test_nothing_under_runs_imports_the_project_package() -> None:
    upward = sorted(
        module
        for module in modules()
        if "benchdash" in third_party_imports(module) and module not in IMPORTS_THE_PROJECT
    )
    assert upward == [], f"send tasks through celery.current_app instead: {upward}"


# --- one word per thing ----------------------------------------------------------------------


def _names(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Every name the code gives: functions, classes, arguments, variables, attributes."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node.lineno, node.name
        elif isinstance(node, ast.arg):
            yield node.lineno, node.arg
        elif isinstance(node, ast.Name):
            yield node.lineno, node.id
        elif isinstance(node, ast.Attribute):
            yield node.lineno, node.attr
        elif isinstance(node, ast.keyword) and node.arg:
            yield getattr(node, "lineno", 0), node.arg


def test_code_that_builds_http_responses_says_response() -> None:
    """The word answer is kept for a verdict (docs/answers.md, benchdash_cli/answer.py);
    the pages, the API and runs/http/ build responses, and name them so."""
    named = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for module, path in _modules_of(PAGES_AND_API)
        for line, name in _names(ast.parse(path.read_text()))
        if "answer" in name.lower()
    ]
    assert named == [], "say response:\n" + "\n".join(named)


def test_a_load_host_has_one_word_in_the_pages_the_api_and_the_docs() -> None:
    """load-hosts in both URLs, load_host in the pages' URL names and templates, loadhosts
    in the modules of every layer; the page on several load hosts per cell is named for
    what it tells (multihost, as runs/analysis/multihost.py), not for load hosts."""
    page, api = reverse("load_hosts"), reverse("api-load-hosts")
    assert page.strip("/").split("/")[0] == api.strip("/").split("/")[-1] == "load-hosts"
    assert [
        p for p in ("web/views", "api/setup", "services") if not (APP / p / "loadhosts.py").exists()
    ] == []
    pages = {p.name for p in (ROOT / "templates" / "runs").glob("*.html")}
    assert {"load_hosts.html", "load_host_detail.html", "load_host_form.html"} <= pages
    assert pages & {"hosts.html", "host_detail.html", "host_form.html"} == set()
    urls = (APP / "web" / "urls.py").read_text()
    assert '"hosts' not in urls and 'name="host_' not in urls
    assert not (ROOT / "docs" / "load-hosts.md").exists()
    assert (
        (ROOT / "docs" / "multihost.md").read_text().startswith("# A cell from several load hosts")
    )


# The nightly feature's modules, where a step is a change point: its analysis and services,
# and its API and page (a plan's history, its alerts).
NIGHTLY = (
    APP / "analysis" / "nightly",
    APP / "services" / "nightly",
    APP / "api" / "nightly",
    APP / "web" / "views" / "history.py",
)


def test_a_step_is_a_change_point_and_nothing_else() -> None:
    """Preflight makes checks, a batch's data sets go through stages (prepare, cleanup),
    the automatic modes go in rounds and a search probes its next value, a ramp climbs
    levels: outside the nightly feature no name says step."""
    code = [*APP.rglob("*.py"), *(ROOT / "benchdash").rglob("*.py")]
    code += [*(ROOT / "benchdash_cli").rglob("*.py")]
    named = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in code
        if "migrations" not in path.parts
        and not any(path == room or room in path.parents for room in NIGHTLY)
        for line, name in _names(ast.parse(path.read_text()))
        if "step" in name.lower()
    ]
    assert named == [], "say check, stage, round, probe or level:\n" + "\n".join(named)


def test_a_change_in_percent_is_printed_by_one_function() -> None:
    """signed_pct and the minus sign it prints live once (runs/analysis/percent.py); the
    command-line client prints what the API wrote and has no copy."""
    defined = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in [*APP.rglob("*.py"), *(ROOT / "benchdash_cli").rglob("*.py")]
        for node in ast.walk(ast.parse(path.read_text()))
        if (isinstance(node, ast.FunctionDef) and node.name == "signed_pct")
        or (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "MINUS" for t in node.targets)
        )
    ]
    assert defined == ["runs/analysis/percent.py:11", "runs/analysis/percent.py:14"]
