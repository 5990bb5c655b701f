"""The axes that change the server or the workload: several targets, tests, installs and
config files, and the order they run in."""

import json
from collections import Counter

import pytest

from runs.errors import InvalidInput
from runs.sysbench.matrix import (
    Axes,
    ServerAxes,
    cleanup_points,
    expand,
    prepare_points,
    restart_points,
)
from runs.sysbench.matrix import (
    TestSpec as Spec,
)

SUITE = [
    Spec("oltp_update_index", family="write"),
    Spec("oltp_point_select", family="point"),
    Spec("oltp_read_only", {"range-size": 10}, family="range"),
]


def cells_for(*, tests=(), servers=None, threads=(1, 2), settings=None, repeats=2, seed=7):
    return expand(
        test="oltp_read_write",
        tests=tests,
        servers=servers,
        fixed_options={"time": 10},
        axes=Axes(threads=list(threads), server_settings=settings or {}),
        repeats=repeats,
        order="interleaved",
        seed=seed,
        dataset_policy="shared",
    )


def test_one_test_and_one_target_keep_the_cell_keys_of_before():
    (cell, *_) = cells_for(threads=(1,), repeats=1)
    assert json.loads(cell.key()) == {"threads": 1, "settings": {}, "options": {}}
    assert cell.test == "oltp_read_write" and cell.axes == ()


def test_a_tests_axis_runs_readers_before_writers_on_one_data_set():
    cells = cells_for(tests=SUITE)
    assert len(cells) == 3 * 2 * 2
    writers = [c.position for c in cells if c.test == "oltp_update_index"]
    readers = [c.position for c in cells if c.test != "oltp_update_index"]
    assert max(readers) < min(writers)
    # One data set (every oltp test shares the sbtest tables): one prepare, one cleanup.
    assert prepare_points(cells, "shared") == [0]
    assert cleanup_points(cells, "shared") == [len(cells) - 1]
    keys = {json.loads(c.key())["test"] for c in cells}
    assert keys == {"oltp_update_index", "oltp_point_select", "oltp_read_only"}
    (ranged,) = {c.options["range-size"] for c in cells if c.test == "oltp_read_only"}
    assert ranged == 10
    assert all("range-size" not in c.options for c in cells if c.test != "oltp_read_only")


def test_every_round_runs_every_cell_of_its_phase_once():
    cells = cells_for(tests=SUITE, repeats=3)
    per_round = Counter((c.round, c.key()) for c in cells)
    assert set(per_round.values()) == {1}
    assert Counter(c.round for c in cells) == {0: 6, 1: 6, 2: 6}  # 3 tests x 2 threads


def test_a_test_listed_twice_with_the_same_options_is_refused():
    with pytest.raises(InvalidInput, match=r"^tests: duplicate"):
        cells_for(tests=[Spec("oltp_point_select"), Spec("oltp_point_select")])


def test_an_unknown_test_on_the_axis_is_refused_by_name():
    with pytest.raises(InvalidInput, match=r"^test: unknown test 'oltp_nope'"):
        cells_for(tests=[Spec("oltp_point_select"), Spec("oltp_nope")])


def test_targets_interleave_within_each_round_and_each_is_prepared():
    cells = cells_for(servers=ServerAxes(targets=(11, 12)), repeats=3)
    assert {c.target for c in cells} == {11, 12}
    for round_number in range(3):
        in_round = [c.target for c in cells if c.round == round_number]
        assert Counter(in_round) == {11: 2, 12: 2}
    # Each target is a server of its own: prepared before its first cell, cleaned after its last.
    first = {t: min(c.position for c in cells if c.target == t) for t in (11, 12)}
    last = {t: max(c.position for c in cells if c.target == t) for t in (11, 12)}
    assert prepare_points(cells, "shared") == sorted(first.values())
    assert cleanup_points(cells, "shared") == sorted(last.values())
    assert all(json.loads(c.key())["target"] == c.target for c in cells)
    assert all(c.label.startswith(f"target={c.target} ") for c in cells)


def test_a_round_runs_all_cells_of_one_config_before_the_next():
    servers = ServerAxes(configs=("base", "odirect"), restart_settings=frozenset({"bp"}))
    cells = cells_for(servers=servers, settings={"bp": ["128M", "1G"]}, repeats=3)
    for round_number in range(3):
        in_round = [c.restart_key for c in cells if c.round == round_number]
        runs_of_keys = [k for i, k in enumerate(in_round) if i == 0 or in_round[i - 1] != k]
        assert len(runs_of_keys) == 4 == len(set(runs_of_keys))  # 2 configs x 2 bp values
    # A restart wherever the key changes; a round may begin with the last round's config.
    keys = [c.restart_key for c in cells]
    changes = [i for i, k in enumerate(keys) if i == 0 or keys[i - 1] != k]
    assert restart_points(cells) == changes and 10 <= len(changes) <= 12
    # The seeded order differs between rounds: drift is not tied to one config.
    orders = {tuple(dict.fromkeys(c.restart_key for c in cells if c.round == r)) for r in range(3)}
    assert len(orders) > 1


def test_installs_are_servers_of_their_own_with_their_own_data_set():
    cells = cells_for(servers=ServerAxes(installs=("15", "17")), repeats=2)
    assert {c.install for c in cells} == {"15", "17"}
    assert len(prepare_points(cells, "shared")) == 2
    assert restart_points(cells)[0] == 0
    assert {json.loads(c.key())["install"] for c in cells} == {"15", "17"}


def test_settings_that_need_no_restart_do_not_split_a_round():
    servers = ServerAxes(configs=("a", "b"))
    cells = cells_for(servers=servers, settings={"sync_binlog": ["0", "1"]}, repeats=1)
    keys = [c.restart_key for c in cells]
    assert {k[1] for k in keys} == {"a", "b"}
    assert len(restart_points(cells)) == 2
