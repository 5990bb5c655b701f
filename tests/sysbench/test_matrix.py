"""Expanding a plan's matrix into the ordered runs of a batch."""

import json
from collections import Counter

import pytest

from runs.errors import InvalidInput
from runs.models import Run
from runs.sysbench.matrix import MAX_RUNS, Axes, cleanup_points, expand, prepare_points

DURABILITY = {"innodb_flush_log_at_trx_commit": ["1", "2"], "sync_binlog": ["0", "1"]}


def cells_for(
    *,
    test="oltp_insert",
    fixed=None,
    threads=(1, 2, 4),
    settings=None,
    options=None,
    repeats=3,
    order="interleaved",
    seed=42,
    policy="shared",
):
    return expand(
        test=test,
        fixed_options={"time": 30} if fixed is None else fixed,
        axes=Axes(threads=list(threads), server_settings=settings or {}, options=options or {}),
        repeats=repeats,
        order=order,
        seed=seed,
        dataset_policy=policy,
    )


def refused(field):
    return pytest.raises(InvalidInput, match=rf"^{field}: ")


# --- order --------------------------------------------------------------------------------


def test_interleaved_runs_every_cell_once_per_round():
    cells = cells_for(settings=DURABILITY)
    assert len(cells) == 3 * 4 * 3
    assert [c.position for c in cells] == list(range(36))
    keys = {c.key() for c in cells}
    assert len(keys) == 12
    for round_number in range(3):
        in_round = cells[round_number * 12 : (round_number + 1) * 12]
        assert {c.round for c in in_round} == {round_number}
        assert {c.key() for c in in_round} == keys


def test_interleaved_order_is_shuffled_differently_each_round():
    cells = cells_for(settings=DURABILITY)
    rounds = [[c.key() for c in cells[i : i + 12]] for i in (0, 12, 24)]
    ramp = [c.key() for c in cells_for(settings=DURABILITY, order="ramp")[:12]]
    assert rounds[0] != rounds[1] != rounds[2]
    assert ramp not in rounds


def test_same_seed_gives_same_order():
    first = [c.label for c in cells_for(settings=DURABILITY, seed=7)]
    again = [c.label for c in cells_for(settings=DURABILITY, seed=7)]
    other = [c.label for c in cells_for(settings=DURABILITY, seed=8)]
    assert first == again
    assert first != other


def test_order_does_not_depend_on_the_order_of_dict_keys():
    # A JSON column may hand the axes back with their keys in another order.
    reordered = {"sync_binlog": ["0", "1"], "innodb_flush_log_at_trx_commit": ["1", "2"]}
    one = [c.label for c in cells_for(settings=DURABILITY, threads=(4, 1, 2))]
    two = [c.label for c in cells_for(settings=reordered, threads=(1, 2, 4))]
    assert one == two


def test_ramp_runs_threads_ascending_for_each_setting_in_every_round():
    cells = cells_for(
        threads=(8, 1, 4), settings={"sync_binlog": ["1", "0"]}, repeats=2, order="ramp"
    )
    expected_round = [
        "threads=1 sync_binlog=1",
        "threads=4 sync_binlog=1",
        "threads=8 sync_binlog=1",
        "threads=1 sync_binlog=0",
        "threads=4 sync_binlog=0",
        "threads=8 sync_binlog=0",
    ]
    assert [c.label for c in cells] == expected_round * 2
    assert [c.round for c in cells] == [0] * 6 + [1] * 6


# --- data sets ----------------------------------------------------------------------------


def test_shared_policy_keeps_cells_of_one_data_set_together():
    cells = cells_for(options={"table-size": [1000, 10000]}, settings={"sync_binlog": ["0", "1"]})
    sizes = [c.options["table-size"] for c in cells]
    assert sizes == [1000] * 18 + [10000] * 18
    # each data set runs all its rounds before the next is prepared
    assert [c.round for c in cells[:18]] == [0] * 6 + [1] * 6 + [2] * 6
    assert prepare_points(cells, "shared") == [0, 18]
    assert cleanup_points(cells, "shared") == [17, 35]


def test_shared_policy_with_one_data_set_prepares_once():
    cells = cells_for(settings=DURABILITY)
    assert prepare_points(cells, "shared") == [0]
    assert cleanup_points(cells, "shared") == [35]


def test_fresh_policy_prepares_before_every_cell_and_rounds_span_the_matrix():
    cells = cells_for(options={"table-size": [1000, 10000]}, repeats=2, policy="fresh")
    assert prepare_points(cells, "fresh") == list(range(12))
    assert cleanup_points(cells, "fresh") == list(range(12))
    assert [c.round for c in cells] == [0] * 6 + [1] * 6
    assert Counter(c.options["table-size"] for c in cells[:6]) == {1000: 3, 10000: 3}


def test_tests_without_a_data_set_need_no_prepare():
    cells = cells_for(test="cpu", fixed={"cpu-max-prime": 20000})
    assert all(c.dataset == () for c in cells)
    assert prepare_points(cells, "shared") == []
    assert cleanup_points(cells, "fresh") == []


def test_bulk_insert_needs_a_fresh_data_set():
    with pytest.raises(InvalidInput, match=r"^dataset_policy: bulk_insert inserts the same"):
        cells_for(test="bulk_insert")
    cells = cells_for(test="bulk_insert", policy="fresh", repeats=1)
    assert sorted(c.dataset for c in cells) == [
        ("bulk_insert", "threads=1"),
        ("bulk_insert", "threads=2"),
        ("bulk_insert", "threads=4"),
    ]


# --- cells --------------------------------------------------------------------------------


def test_a_cell_carries_fixed_options_axis_values_and_threads():
    cells = cells_for(
        fixed={"time": 30, "report-interval": 3},
        threads=(2,),
        settings={"sync_binlog": ["0"]},
        options={"table-size": ["1000"]},
        repeats=1,
    )
    (cell,) = cells
    assert cell.threads == 2
    assert cell.settings == {"sync_binlog": "0"}
    assert cell.options == {"threads": 2, "time": 30, "report-interval": 3, "table-size": 1000}
    assert cell.dataset[:3] == ("oltp", "tables=1", "table-size=1000")


def test_a_run_keeps_its_threads_once_and_sysbench_gets_them_from_there():
    (cell,) = cells_for(threads=(8,), options={"table-size": ["1000"]}, repeats=1)
    assert cell.run_options == {"time": 30, "table-size": 1000}  # no "threads": Run.threads
    run = Run(threads=cell.threads, options=cell.run_options)
    assert run.sysbench_options == cell.options == {**cell.run_options, "threads": 8}


def test_label_names_the_axis_values_and_key_is_the_same_in_every_round():
    cells = cells_for(
        threads=(2,), settings=DURABILITY, options={"table-size": [1000]}, order="ramp"
    )
    assert cells[0].label == (
        "threads=2 innodb_flush_log_at_trx_commit=1 sync_binlog=0 table-size=1000"
    )
    first = cells[0].key()
    assert json.loads(first) == {
        "threads": 2,
        "settings": {"innodb_flush_log_at_trx_commit": "1", "sync_binlog": "0"},
        "options": {"table-size": "1000"},
    }
    assert [c.key() for c in cells if c.label == cells[0].label] == [first] * 3


# --- validation ---------------------------------------------------------------------------


@pytest.mark.parametrize("threads", [(), (0,), (1, -2), (1, "1"), (4, 4)])
def test_threads_axis_needs_distinct_counts_of_at_least_one(threads):
    with refused("threads"):
        cells_for(threads=threads)


def test_threads_is_only_an_axis():
    with refused("threads"):
        cells_for(fixed={"threads": 4})
    with refused("threads"):
        cells_for(options={"threads": [4]})


def test_duplicate_axis_values_are_refused():
    with pytest.raises(InvalidInput, match=r"^sync_binlog: duplicate value 1$"):
        cells_for(settings={"sync_binlog": ["1", 1]})
    with pytest.raises(InvalidInput, match=r"^table-size: duplicate value 1000$"):
        cells_for(options={"table-size": [1000, "1000"]})


def test_axis_values_go_through_the_option_whitelist():
    with refused("table-size"):
        cells_for(options={"table-size": [0]})
    with pytest.raises(InvalidInput, match=r"^cpu-max-prime: not an option of test oltp_insert"):
        cells_for(options={"cpu-max-prime": [10000]})
    with refused("rate"):
        cells_for(options={"rate": []})


def test_an_option_cannot_be_both_fixed_and_an_axis():
    with pytest.raises(InvalidInput, match=r"^table-size: is both a fixed option and an axis"):
        cells_for(fixed={"table-size": 100}, options={"table-size": [1000]})


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"sync_binlog": ["1; DROP TABLE x"]}, "sync_binlog"),
        ({"sync_binlog": ["$(id)"]}, "sync_binlog"),
        ({"sync binlog": ["1"]}, "server_settings"),
        ({"sync_binlog": []}, "sync_binlog"),
    ],
)
def test_server_settings_are_checked(settings, field):
    with refused(field):
        cells_for(settings=settings)


def test_policies_are_checked():
    with refused("order"):
        cells_for(order="random")
    with refused("dataset_policy"):
        cells_for(policy="never")
    with refused("repeats"):
        cells_for(repeats=0)
    with refused("test"):
        cells_for(test="tpcc")


def test_cross_option_rules_are_checked_for_every_cell():
    with refused("file-test-mode"):
        cells_for(test="fileio", fixed={"file-total-size": "64M"})
    cells = cells_for(test="fileio", options={"file-test-mode": ["seqrd", "rndrd"]}, repeats=1)
    assert len(cells) == 6
    assert prepare_points(cells, "shared") == [0]


def test_the_number_of_runs_is_capped():
    with pytest.raises(InvalidInput) as error:
        cells_for(threads=range(1, 101), options={"rate": list(range(1, 11))}, repeats=11)
    assert error.value.field == "matrix"
    assert error.value.message.startswith(
        f"1000 cells x 11 repeats = 11000 runs, more than the limit of {MAX_RUNS}"
    )
    assert len(cells_for(threads=range(1, 101), options={"rate": list(range(1, 11))})) == 3000
