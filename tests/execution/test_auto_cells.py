"""The runs an auto mode adds (runs/execution/auto.py) are the cell's they extend: its
test, target, install and config, keyed as the plan's own cells are (issue 47), so that
the results set them in its series and the runner restarts its server with its config."""

from __future__ import annotations

from typing import Any

from runs.analysis.auto.rounds import NewCell
from runs.execution import auto
from runs.models import Batch
from runs.sysbench.cells import ServerAxes, TestSpec
from runs.sysbench.matrix import Axes, expand

CONFIGS = ("b1e1", "b0e1", "b0e0")
INSTALLS = ("11.4", "10.11")
TESTS: list[dict[str, Any]] = [
    {"test": "oltp_read_only", "options": {"range-size": 10}},
    {"test": "oltp_read_only"},
]
PARAMS = {
    "test": "oltp_read_only",
    "options": {"time": 2},
    "tests": TESTS,
    "servers": {"configs": [{"label": c, "text": "[mysqld]\n"} for c in CONFIGS],
                "installs": list(INSTALLS)},
}  # fmt: skip


def launched() -> list:
    """The plan's cells as its launch made them (runs/services/plans.py)."""
    return expand(
        test="oltp_read_only", fixed_options={"time": 2}, axes=Axes(threads=[1]), repeats=1,
        order="ramp", seed=0, dataset_policy="shared",
        tests=[TestSpec(t["test"], t.get("options", {})) for t in TESTS],
        servers=ServerAxes(configs=CONFIGS, installs=INSTALLS),
    )  # fmt: skip


def test_an_added_run_is_keyed_as_the_cell_it_extends_but_its_threads():
    batch = Batch(params=PARAMS, seed=0)
    place = ("b0e0", "10.11", 10)
    extended = next(
        c for c in launched() if (c.config, c.install, c.options.get("range-size")) == place
    )

    added = auto._expand(batch, NewCell({}, {}, 2, 2, "threads search", extends=extended.key()))

    # on main: one run per config and install, keyed without them (a test-less, config-less cell)
    assert len(added) == 2
    for one in added:
        assert (one.test, one.install, one.config, one.threads) == (
            "oltp_read_only",
            "10.11",
            "b0e0",
            2,
        )
        assert one.key() == extended.key().replace('"threads":1', '"threads":2')
