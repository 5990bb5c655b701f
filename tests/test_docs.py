"""The README is an entry page and the manual still works (issue 22, item 5): the README stays
under 10 KB and links every page of docs/; every relative link of the README and docs/
lands on a file, and on a heading when it names one; and each command, page and API path
the pages show is one the checkout accepts: the benchmark scripts' options, the management
commands' and the `benchdash` command's arguments, the make targets and scripts, the URLs.
Nothing here starts the product: a command is checked by its own parser."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import get_commands, load_command_class
from django.urls import Resolver404, resolve

from benchdash_cli.main import _parser as benchdash_parser

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = sorted((ROOT / "docs").glob("*.md"))
DIARY = sorted((ROOT / "docs" / "performance").glob("*.md"))  # linked from PERFORMANCE.md
MANUAL = [*PAGES, *DIARY]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def lines(path: Path) -> list[str]:
    """The page's lines, a command continued with a backslash joined into one line."""
    joined: list[str] = []
    for line in path.read_text().splitlines():
        if joined and joined[-1].endswith("\\"):
            joined[-1] = joined[-1][:-1].rstrip() + " " + line.strip()
        else:
            joined.append(line)
    return joined


def command_args(line: str, start: int) -> list[str]:
    """The arguments after position `start`, up to the end of the command: a closing
    backtick or parenthesis, a redirection, a pipe or a comment; [optional] brackets off."""
    rest = re.split(r"[`)>|#]", line[start:], maxsplit=1)[0]
    return shlex.split(rest.replace("[", " ").replace("]", " "))


def code(path: Path) -> list[str]:
    """The page's lines of code: in a fenced block, or indented as a block (4 spaces)."""
    found, fenced = [], False
    for line in lines(path):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif fenced or line.startswith("    "):
            found.append(line)
    return found


def shown(pattern: str, *, read=lines) -> list[tuple[str, str, list[str]]]:
    """Every (page, name, arguments) where a page shows the command `pattern` matches."""
    found = []
    for path in [README, *MANUAL]:
        for line in read(path):
            for match in re.finditer(pattern, line):
                found.append((path.name, match.group(1), command_args(line, match.end())))
    return found


def anchors(path: Path) -> set[str]:
    """The anchors GitHub gives a page's headings."""
    return {
        re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
        for line in path.read_text().splitlines()
        if line.startswith("#")
    }


def test_the_readme_is_an_entry_page_that_links_every_page_of_the_manual():
    assert README.stat().st_size < 10_000
    linked = {m for m in LINK.findall(README.read_text()) if m.startswith("docs/")}
    assert [p.name for p in PAGES if f"docs/{p.name}" not in linked] == []


def test_performance_links_every_page_of_its_measurement_diary():
    text = (ROOT / "docs" / "PERFORMANCE.md").read_text()
    linked = {link.partition("#")[0] for link in LINK.findall(text)}
    assert DIARY
    assert [p.name for p in DIARY if f"performance/{p.name}" not in linked] == []


@pytest.mark.parametrize("page", [README, *MANUAL], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_lands_on_a_file_and_its_heading(page: Path):
    broken = []
    for link in LINK.findall(page.read_text()):
        if re.match(r"[a-z]+:", link):
            continue
        file, _, anchor = link.partition("#")
        target = (page.parent / file).resolve() if file else page
        if not target.exists() or (anchor and anchor not in anchors(target)):
            broken.append(link)
    assert broken == []


BENCH = r"bench/([a-z_]+)\.py"


def test_the_benchmark_scripts_take_the_options_the_pages_show():
    options: dict[str, set[str]] = {}
    for _, script, args in shown(BENCH):
        options.setdefault(script, set()).update(a for a in args if a.startswith("--"))
    assert len(options) >= 10  # every script of PERFORMANCE.md's sections
    unknown = {}
    for script, wanted in options.items():
        if not wanted:
            continue
        done = subprocess.run(
            [sys.executable, f"bench/{script}.py", "--help"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        given = set(re.findall(r"--[a-z][a-z-]*", done.stdout))
        if wanted - given:
            unknown[script] = sorted(wanted - given)
    assert unknown == {}


def test_the_management_commands_accept_the_arguments_the_pages_show():
    commands = get_commands()
    shown_here = shown(r"manage\.py ([a-z_]+)")
    assert {"import_log", "create_token", "check"} <= {name for _, name, _ in shown_here}
    for page, name, args in shown_here:
        assert name in commands, (page, name)
        if args:  # a command named in the prose shows no arguments
            parser = load_command_class(commands[name], name).create_parser("manage.py", name)
            parser.parse_args(args)  # a CommandError names what is refused


def test_the_benchdash_command_accepts_the_lines_the_pages_show():
    shown_here = [
        (page, args)
        for page, _, args in [*shown(r"^\s*(benchdash)\b", read=code), *shown(r"`(benchdash) ")]
        if args and not args[0].startswith("/")  # layout.md's map: benchdash/ the project
    ]
    assert len(shown_here) >= 4
    for page, args in shown_here:
        try:
            benchdash_parser().parse_args(args)
        except SystemExit:  # the parser printed what it refused
            pytest.fail(f"{page}: benchdash {shlex.join(args)} is refused")


def test_the_make_targets_scripts_and_examples_shown_exist():
    targets = set(re.findall(r"^([a-z-]+):", (ROOT / "Makefile").read_text(), re.M))
    assert {name for _, name, _ in shown(r"(?:^|`)\s*make ([a-z-]+)")} <= targets
    for page, name, _ in shown(r"\bscripts/([a-z_-]+)"):
        assert (ROOT / "scripts" / name).is_file(), (page, name)  # run, or sourced
    for page, name, args in shown(r"examples/([a-z_]+)\.py"):
        source = (ROOT / "examples" / f"{name}.py").read_text()
        assert [a for a in args if a.startswith("--") and f'"{a}"' not in source] == [], page


PATH = re.compile(r"`(?:(GET|POST|PUT|PATCH|DELETE) )?(/[a-z][^`\s?]*)[^`]*`")
NOT_OURS = ("/proc", "/usr", "/etc", "/var", "/tmp", "/dev")
PREFIXES = {"/api/", "/api/v1/"}  # named as where the API lives, not as an endpoint


def test_the_pages_and_api_paths_shown_exist_with_their_method():
    missing = []
    for path in [README, *MANUAL]:
        for method, url in PATH.findall(path.read_text()):
            if url.startswith(NOT_OURS) or url in PREFIXES:
                continue
            concrete = re.sub(r"\{[^}]*\}|<[^>]*>", "1", url)
            try:
                view = resolve(concrete).func
            except Resolver404:
                missing.append(f"{path.name}: {url}")
                continue
            cls = getattr(view, "cls", None)
            if method and cls is not None and not hasattr(cls, method.lower()):
                missing.append(f"{path.name}: {method} {url}")
    assert missing == []
