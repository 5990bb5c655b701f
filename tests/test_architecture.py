"""The house stays as built: imports under runs/ run one way and never in a circle.

    web, api, tasks, admin, management  →  http  →  services  →  execution
        →  targets, loadhosts, sysbench, analysis  →  models

A module may import from its own layer or any layer below it, never above. The pure
packages (sysbench, analysis) import neither Django nor anything of runs but each other,
so they can be read and tested on their own. The imports are read with `ast`, those
inside functions too: a late import is still an arrow. What no layer may do, whatever its
place (pages opening SSH, executors saving rows...), is held by tests/test_walls.py.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import fields
from functools import cache
from pathlib import Path

import pytest

from runs.analysis.auto.settings import Auto

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "runs"

# Layer of each top-level part of runs/, from the bottom up.
LAYERS: dict[str, int] = {
    "models": 0,
    "secrets": 0,  # the encrypted model field
    "apps": 0,
    "errors": 0,  # the application's own errors, raised from every room
    "frozen": 0,  # a batch's frozen plan, read from its params
    "columns": 0,  # typed readers of the other JSON columns
    "bidi": 0,  # bidirectional controls in user text, shown instead of obeyed
    "credentials": 0,  # settings that hold a credential, by name and value
    "json_text": 0,  # JSON text by orjson, with the standard library's values
    "db_rows": 0,  # model instances from rows read with a written-out SELECT
    "sysbench": 1,
    "analysis": 1,
    "targets": 1,
    "loadhosts": 1,
    "execution": 2,
    "services": 3,
    "http": 4,  # what the pages and the API both need to speak HTTP
    "web": 5,
    "api": 5,
    "tasks": 5,
    "admin": 5,
    "management": 5,
}
PURE = {"sysbench", "analysis"}
# Bottom modules that import nothing of runs, no Django and no I/O: pure code may use them.
PURE_BOTTOM = {"errors", "frozen", "columns", "bidi", "credentials"}
# Within the middle layer, the pure packages stand below the I/O boundaries.
SIDEWAYS_FORBIDDEN = {
    ("targets", "loadhosts"),
    ("loadhosts", "targets"),
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


@cache
def modules() -> dict[str, Path]:
    return {
        _module_name(path): path
        for path in sorted(APP.rglob("*.py"))
        if "migrations" not in path.relative_to(APP).parts
    }


def _imported(node: ast.AST, module: str, is_package: bool, known: Iterable[str]) -> Iterator[str]:
    """The modules an import statement names: `from runs.services import batches` imports
    the module runs.services.batches, `from runs.targets import connect` the package."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            anchor = module.split(".")
            anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
            base = ".".join([*anchor, base] if base else anchor)
        for alias in node.names:
            submodule = f"{base}.{alias.name}"
            yield submodule if submodule in known else base


@cache
def imports_of(module: str) -> frozenset[str]:
    """The modules of runs/ that `module` imports, those inside functions too."""
    path = modules()[module]
    tree = ast.parse(path.read_text(), filename=str(path))
    known = modules()
    found = set()
    for node in ast.walk(tree):
        for name in _imported(node, module, path.name == "__init__.py", known):
            if name in known and name != module:
                found.add(name)
    return frozenset(found)


def third_party_imports(module: str) -> set[str]:
    path = modules()[module]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.split(".")[0])
    return names


def part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_every_part_of_runs_has_a_layer() -> None:
    unplaced = sorted({part(m) for m in modules() if m != "runs"} - set(LAYERS))
    assert unplaced == [], f"give these parts of runs/ a layer in LAYERS: {unplaced}"


def test_imports_never_run_up_the_layers() -> None:
    upward = []
    for module in modules():
        if module == "runs":
            continue
        mine = part(module)
        for imported in imports_of(module):
            theirs = part(imported)
            if imported == "runs":
                continue
            if LAYERS[theirs] > LAYERS[mine] or (mine, theirs) in SIDEWAYS_FORBIDDEN:
                upward.append(f"{module} → {imported}")
    assert upward == [], "imports against the order:\n" + "\n".join(upward)


def test_pure_packages_import_no_django_and_nothing_impure() -> None:
    impure = []
    for module in modules():
        if part(module) not in PURE | PURE_BOTTOM:
            continue
        if third_party_imports(module) & {"django", "rest_framework", "celery", "redis"}:
            impure.append(f"{module} imports a framework")
        impure += [
            f"{module} → {imported}"
            for imported in imports_of(module)
            if part(imported) not in PURE | PURE_BOTTOM and imported != "runs"
        ]
    assert impure == [], "pure code must stay pure:\n" + "\n".join(impure)


def _cycle_from(start: str) -> list[str] | None:
    """A path start → ... → start through the import graph, if there is one."""
    stack: list[tuple[str, list[str]]] = [(start, [start])]
    seen: set[str] = set()
    while stack:
        module, path = stack.pop()
        for imported in sorted(imports_of(module)):
            if imported == start:
                return [*path, start]
            if imported not in seen:
                seen.add(imported)
                stack.append((imported, [*path, imported]))
    return None


def test_no_module_imports_itself_in_a_circle() -> None:
    cycles = {
        " → ".join(cycle) for module in modules() if (cycle := _cycle_from(module)) is not None
    }
    assert cycles == set(), "import circles:\n" + "\n".join(sorted(cycles))


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from runs.services import batches\n", {"runs.services.batches"}),
        ("from runs.models import Run\n", {"runs.models"}),
        ("from runs.targets import connect_to\n", {"runs.targets"}),
        ("def f():\n    from runs.web import forms\n", {"runs.web.forms"}),
        ("import runs.tasks\n", {"runs.tasks"}),
    ],
)
def test_the_reader_sees_every_kind_of_import(source: str, expected: set[str]) -> None:
    found = {
        name
        for node in ast.walk(ast.parse(source))
        for name in _imported(node, "runs.api.setup.plans", False, modules())
    }
    assert found == expected


# A module longer than this is two modules, unless it says why not here.
MAX_LINES = 400
LONG_FOR_A_REASON = {
    "runs.sysbench.parser": "one streaming state machine over sysbench's whole output",
    "runs.models": "the vocabulary: every model of the app in one file, as Django expects",
    "runs.columns": "every JSON column's typed reader in one place, the one module besides "
    "runs/frozen.py allowed to read those columns by key (test_json_columns_are_read_...)",
    "runs.targets.postgres": "one adapter class answering ServerTarget for PostgreSQL (the "
    "server, settings, the data set, counters) with its error hints; its allow-list is apart",
}


def test_modules_stay_short_enough_to_read() -> None:
    long = {
        module: length
        for module, path in modules().items()
        if (length := len(path.read_text().splitlines())) > MAX_LINES
        and module not in LONG_FOR_A_REASON
    }
    assert long == {}, f"split these modules, or give the reason in LONG_FOR_A_REASON: {long}"


# One word per feature in every layer: a batch's results from the pure module to the JS,
# and each automatic mode by the name the plan's `auto` field gives it.
RESULTS_FEATURE = (
    "runs/analysis/batch_results.py",
    "runs/services/answers/results.py",
    "runs/api/answers/results.py",
    "runs/web/views/results.py",
    "templates/runs/batch_results.html",
    "static/js/batch_results.js",
)


def test_a_batchs_results_keep_one_name_in_every_layer() -> None:
    assert [p for p in RESULTS_FEATURE if not (ROOT / p).exists()] == []
    defined = [
        path
        for path in APP.rglob("*.py")
        if any(
            isinstance(node, ast.ClassDef) and node.name == "BatchResults"
            for node in ast.walk(ast.parse(path.read_text()))
        )
    ]
    assert defined == [APP / "analysis" / "batch_results.py"]


def test_each_automatic_mode_has_the_module_of_its_name() -> None:
    modes = [f.name for f in fields(Auto)]  # the keys of a plan's `auto` field
    assert modes == ["repeats", "threads", "rate"]
    assert [m for m in modes if not (APP / "analysis" / "auto" / f"{m}.py").exists()] == []
    assert (APP / "execution" / "auto.py").exists()


# The rooms named after kinds of code group their modules by feature: one sub-package per
# feature, named with the feature's one word, the same word in every room that has it.
ROOMS = ("execution", "analysis", "services", "api")
MAPPED = (*ROOMS, "sysbench")
FEATURES: dict[str, set[str]] = {
    "analysis": {"auto", "host_metrics", "nightly", "noise", "why"},
    "execution": {"multihost", "outages", "preflight", "restarts", "stream"},
    "services": {"answers", "imports", "nightly", "scripts"},
    "api": {"answers", "nightly", "setup"},
}


def _map_names(package: Path) -> set[str]:
    """The names a package's docstring map gives a line: `    name.py   what it is for`
    (or `- name.py: what it is for`), and `    feature/   ...` for a sub-package."""
    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
    names = set()
    for line in doc.splitlines():
        if line.startswith("    ") and line.strip():
            names.add(line.split()[0])
        elif line.startswith("- ") and ":" in line:
            names.add(line[2:].split(":")[0])
    return names


def test_each_room_groups_its_features_in_sub_packages_of_their_word() -> None:
    found = {
        room: {p.name for p in (APP / room).iterdir() if (p / "__init__.py").exists()}
        for room in ROOMS
    }
    assert found == FEATURES, "a feature's sub-package and its word belong in FEATURES"


@pytest.mark.parametrize(
    "package",
    [*MAPPED, *(f"{room}/{feature}" for room in ROOMS for feature in sorted(FEATURES[room]))],
)
def test_each_rooms_map_names_every_module_of_the_room(package: str) -> None:
    """runs/execution/, runs/analysis/, runs/services/, runs/sysbench/ and each feature's package
    open with the map of their room, a line per module and per sub-package: a module added
    or renamed without its line in the map fails here."""
    room = APP / package
    here = {path.name for path in room.glob("*.py")} - {"__init__.py"}
    here |= {f"{p.name}/" for p in room.iterdir() if (p / "__init__.py").exists()}
    assert sorted(here - _map_names(room)) == [], "give these modules their line in the map"


# The JSON columns code reads by key, each with its typed reader (runs/frozen.py,
# runs/columns.py): parsed once where code reaches the row, read by attribute after.
COLUMN_READERS = {
    "params": "FrozenPlan",  # Batch.params
    "environment": "BatchEnvironment",  # Batch.environment, Run.environment
    "analysis": "NightCheck",  # Batch.analysis
    "options": "RunOptions",  # Run.options, a matrix cell's
    "summary": "RunSummary",  # Run.summary, RunHost.summary
    "counters": "RunCounters",  # Run.counters
    "host_summary": "HostSummary",  # Run.host_summary
    "bottleneck": "Bottleneck",  # Run.bottleneck
}
READERS_HOME = {"runs.columns", "runs.frozen"}


def _column(node: ast.expr) -> str | None:
    """The column `x.summary` or `x.summary or {}` names, if it is one of them."""
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
        node = node.values[0]
    return node.attr if isinstance(node, ast.Attribute) and node.attr in COLUMN_READERS else None


def _read_by_key(node: ast.AST) -> ast.expr | None:
    """What `node` reads by a literal key: `x["tps"]`, `x.get("tps")`; a write is no read."""
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
        key = node.slice
        return node.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        first = node.args[0] if node.args else None
        literal = isinstance(first, ast.Constant) and isinstance(first.value, str)
        return node.func.value if node.func.attr == "get" and literal else None
    return None


def reads_of_columns_by_key(source: str) -> list[str]:
    """`run.summary.get("tps")`, `run.counters["deltas"]`, and a name bound from a column
    (`hosts = run.host_summary or {}`) read the same way in the same function."""
    tree = ast.parse(source)
    found: dict[int, str] = {}
    for scope in ast.walk(tree):
        if not isinstance(scope, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        bound = {
            node.targets[0].id: column
            for node in ast.walk(scope)
            if isinstance(node, ast.Assign)
            and isinstance(node.targets[0], ast.Name)
            and (column := _column(node.value))
        }
        for node in ast.walk(scope):
            read = _read_by_key(node)
            if read is None:
                continue
            name = read.id if isinstance(read, ast.Name) else ""
            if column := _column(read) or bound.get(name):
                found[id(node)] = _said(node, column)
    return sorted(set(found.values()))


def _said(node: ast.AST, column: str) -> str:
    line = getattr(node, "lineno", 0)
    return f"{line}: {ast.unparse(node)} (read {column} through {COLUMN_READERS[column]})"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('run.summary.get("tps")', ["1: run.summary.get('tps') (read summary through RunSummary)"]),
        ('r.bottleneck["kind"]', ["1: r.bottleneck['kind'] (read bottleneck through Bottleneck)"]),
        (
            'def f(run):\n    hosts = run.host_summary or {}\n    return hosts.get("hosts")',
            ["3: hosts.get('hosts') (read host_summary through HostSummary)"],
        ),
        ('RunSummary.load(run.summary).tps\nrun.counters["missing"] = []', []),
        ("run.options.get(name)\nrun.settings.get('sync_binlog')", []),
    ],
)
def test_the_scan_sees_a_column_read_by_key(source: str, expected: list[str]) -> None:
    assert reads_of_columns_by_key(source) == expected


def test_json_columns_are_read_through_their_typed_readers() -> None:
    """Outside runs/columns.py and runs/frozen.py nothing in runs/ reads a JSON column of
    COLUMN_READERS by key: a key's name and its default for older rows live in the reader."""
    reads = [
        f"{path.relative_to(ROOT)}:{read}"
        for module, path in modules().items()
        if module not in READERS_HOME
        for read in reads_of_columns_by_key(path.read_text())
    ]
    assert reads == [], "read these through the typed readers:\n" + "\n".join(reads)
