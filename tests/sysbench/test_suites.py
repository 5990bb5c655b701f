"""A tests axis as the editor writes it, the microbenchmark suite, and how a suite runs:
one data set shared by the tests that can share it, an item that rebuilds its own."""

import json

import pytest

from runs.errors import InvalidInput
from runs.sysbench.cells import cell_identity, item_index
from runs.sysbench.matrix import Axes, cleanup_points, expand, prepare_points
from runs.sysbench.matrix import TestSpec as Spec
from runs.sysbench.suites import FAMILIES, microbenchmarks, suite_from_text, suite_text


def cells_for(items, *, repeats=2, settings=None):
    specs = [
        Spec(i["test"], i.get("options", {}), i.get("family", ""), i.get("rebuild", False))
        for i in items
    ]
    return expand(
        test=specs[0].test,
        tests=specs,
        fixed_options={"time": 5, "tables": 2, "table-size": 1000},
        axes=Axes(threads=[1], server_settings=settings or {}),
        repeats=repeats,
        order="interleaved",
        seed=11,
        dataset_policy="shared",
    )


def test_the_microbenchmark_suite_covers_its_four_families_and_expands():
    suite = microbenchmarks()
    assert [f for f in FAMILIES if f in {i["family"] for i in suite}] == list(FAMILIES)
    cells = cells_for(suite, repeats=1)
    assert len(cells) == len(suite)
    # One data set shared by all but the insert, readers first; the insert rebuilds its own.
    assert prepare_points(cells, "shared") == [0, len(cells) - 1]
    assert cells[-1].test == "oltp_insert" and cells[-1].dataset[-1].startswith("rebuild=")
    writes = {"oltp_update_index", "oltp_update_non_index", "oltp_insert", "oltp_write_only"}
    kinds = [c.test in writes for c in cells]
    assert kinds == sorted(kinds)


def test_an_item_that_rebuilds_is_prepared_again_before_each_of_its_runs():
    # oltp_insert grows its table: each repeat starts from the rows prepared.
    cells = cells_for(microbenchmarks(), repeats=3)
    inserts = [c.position for c in cells if c.test == "oltp_insert"]
    assert len(inserts) == 3
    assert prepare_points(cells, "shared") == [0, *inserts]
    # One cleanup at its end: each rebuild cleans up what is there before preparing.
    assert cleanup_points(cells, "shared") == [inserts[0] - 1, inserts[-1]]


def test_the_suites_writers_on_the_shared_data_set_keep_its_size():
    # oltp_delete (sysbench 1.0.20) only deletes; oltp_insert only inserts.
    suite = microbenchmarks()
    shared = [i for i in suite if i["family"] == "write" and not i.get("rebuild")]
    assert {i["test"] for i in shared} == {
        "oltp_update_index",
        "oltp_update_non_index",
        "oltp_write_only",
    }
    (pair,) = [i for i in shared if i["name"] == "delete-insert"]
    assert pair["options"] == {"index-updates": 0, "non-index-updates": 0, "delete-inserts": 1}
    (insert,) = [i for i in suite if i["test"] == "oltp_insert"]
    assert insert["rebuild"] is True


def test_two_items_of_one_test_are_two_cells_with_their_options_in_the_key():
    suite = microbenchmarks()
    cells = cells_for(suite, repeats=1)
    keys = {c.key() for c in cells}
    assert len(keys) == len(suite)
    sums = next(c for c in cells if c.options.get("sum-ranges") == 1)
    identity = cell_identity(sums.key())
    assert identity["test"] == "oltp_read_only"
    assert identity["test_options"]["sum-ranges"] == "1"
    assert identity["test_options"]["skip-trx"] == "on"
    index = item_index(suite, "oltp_read_only", identity["test_options"])
    assert index is not None
    assert suite[index]["options"]["sum-ranges"] == 1
    assert "sum-ranges=1" in sums.label


def test_an_item_that_rebuilds_gets_a_prepare_of_its_own_after_the_readers():
    items = [
        {"test": "oltp_point_select", "family": "point"},
        {"test": "oltp_insert", "family": "write", "rebuild": True},
        {"test": "oltp_update_index", "family": "write"},
    ]
    cells = cells_for(items, settings={"sync_binlog": ["0", "1"]})
    rebuilt = [c.position for c in cells if c.test == "oltp_insert"]
    # readers and the writer that shares the data set, then the rebuilt one before each run
    assert prepare_points(cells, "shared") == [0, *rebuilt]
    assert rebuilt == list(range(min(rebuilt), len(cells)))
    assert cleanup_points(cells, "shared") == [min(rebuilt) - 1, len(cells) - 1]
    assert cells[-1].dataset[-1] == "rebuild=1"


def test_the_seed_replays_the_same_interleaved_order():
    suite = microbenchmarks()[:4]
    first = [c.key() for c in cells_for(suite, settings={"sync_binlog": ["0", "1"]})]
    again = [c.key() for c in cells_for(suite, settings={"sync_binlog": ["0", "1"]})]
    assert first == again
    rounds = [json.loads(k)["settings"]["sync_binlog"] for k in first[:8]]
    assert sorted(rounds) == ["0"] * 4 + ["1"] * 4


def test_the_editor_text_round_trips_the_suite():
    suite = microbenchmarks()
    assert suite_from_text(suite_text(suite)) == suite


def test_the_editor_text_reads_options_rebuild_and_comments():
    items = suite_from_text(
        "# readers\npoint oltp_point_select\n\nwrite  oltp_insert rebuild  # its own data\n"
        "range oltp_read_only range-size=50 skip-trx=on\n"
    )
    assert items == [
        {"test": "oltp_point_select", "options": {}, "family": "point"},
        {"test": "oltp_insert", "options": {}, "family": "write", "rebuild": True},
        {"test": "oltp_read_only", "options": {"range-size": 50, "skip-trx": True},
         "family": "range"},
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("oltp_point_select", "line 1: give a family and a test"),
        ("point oltp_nothing", "line 1: unknown test"),
        ("point oltp_point_select range-size=5", "line 1: range-size"),
        ("point oltp_point_select junk", "'junk' is not name=value or rebuild"),
        ("9x oltp_point_select", "is not a family name"),
    ],
)
def test_the_editor_text_refuses_what_sysbench_would_not_run(text, said):
    with pytest.raises(InvalidInput) as refused:
        suite_from_text(text)
    assert refused.value.field == "tests"
    assert said in refused.value.message
