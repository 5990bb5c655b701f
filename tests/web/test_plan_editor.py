"""The plan editor's form: what a browser posts becomes a plan's matrix, and a plan shows in
the editor as it was written. Pure: no database."""

from __future__ import annotations

import pytest

from runs.analysis.auto.settings import auto_from_dict
from runs.errors import InvalidInput
from runs.sysbench.matrix import Axes, ServerAxes, expand, restart_points
from runs.web.plan_editor import (
    form_values,
    matrix_from_form,
    parse_script_options,
    script_options_text,
)
from runs.web.plan_estimate import duration_text, estimate


class Post(dict):
    """A QueryDict stand-in: lists of values."""

    def get(self, key, default=None):
        values = super().get(key)
        return values[-1] if values else default

    def getlist(self, key):
        return list(super().get(key, []))


def test_the_editor_form_becomes_the_plan_matrix():
    data = Post(
        threads=["1, 2,4"],
        opt_time=["60"],
        **{"opt_report-interval": ["1"], "opt_rand-type": ["uniform"]},
        set__innodb_flush_log_at_trx_commit=["1", "2"],
        setting_name_0=["innodb_io_capacity"],
        setting_values_0=["200,2000"],
        setting_name_1=[""],
        axis_name_0=["tables"],
        axis_values_0=["1,4"],
    )
    matrix = matrix_from_form(data)
    assert matrix.threads == [1, 2, 4]
    assert matrix.options == {"time": 60, "report-interval": 1, "rand-type": "uniform"}
    assert matrix.server_settings == {
        "innodb_flush_log_at_trx_commit": ["1", "2"],
        "innodb_io_capacity": ["200", "2000"],
    }
    assert matrix.option_axes == {"tables": [1, 4]}


def test_the_editor_names_the_field_at_fault():
    with pytest.raises(InvalidInput) as e:
        matrix_from_form(Post(threads=["1,x"]))
    assert e.value.field == "threads"
    with pytest.raises(InvalidInput) as e:
        matrix_from_form(
            Post(threads=["1"], opt_tables=["2"], axis_name_0=["tables"], axis_values_0=["1,4"])
        )
    assert e.value.field == "tables"


def test_a_plan_shows_in_the_editor_as_it_was_written():
    values = form_values(
        threads=[1, 2],
        options={"time": 60, "histogram": True},
        server_settings={"sync_binlog": ["0", "1"], "innodb_io_capacity": ["200"]},
        option_axes={"tables": [1, 4]},
    )
    assert values["threads"] == "1,2"
    assert values["options"] == {"time": "60", "histogram": "on"}
    assert values["checked"] == {"sync_binlog": ["0", "1"]}
    assert values["setting_rows"][0] == (0, "innodb_io_capacity", "200")
    assert values["axis_rows"][0] == (0, "tables", "1,4")


def test_the_estimate_counts_cells_runs_and_time():
    cells = expand(
        test="oltp_read_only",
        fixed_options={"time": 60, "tables": 1, "table-size": 10000},
        axes=Axes(threads=[1, 2], server_settings={"sync_binlog": ["0", "1"]}),
        repeats=3,
        order="interleaved",
        seed=1,
        dataset_policy="shared",
    )
    e = estimate(cells, "shared")
    assert (e.cells, e.runs, e.sysbench_s) == (4, 12, 720.0)
    assert e.total_s == pytest.approx(720 + 12 * 3 + 5 + 0.2)
    assert duration_text(e.total_s) == "13 min"
    assert duration_text(45) == "45 s" and duration_text(None).startswith("unknown")


def test_the_estimate_adds_the_restarts_counted_over_the_restart_points():
    from runs.models import Plan, Target
    from runs.services.restarts import RESTART_SECONDS, restart_estimate

    cells = expand(
        test="oltp_read_only",
        fixed_options={"time": 60, "tables": 1, "table-size": 10000},
        axes=Axes(threads=[1, 2], server_settings={"innodb_flush_method": ["fsync", "O_DIRECT"]}),
        repeats=2,
        order="interleaved",
        seed=1,
        dataset_policy="shared",
        servers=ServerAxes(restart_settings=frozenset({"innodb_flush_method"})),
    )
    points = restart_points(cells)
    # The cells of one value run together within a round: one restart per value a round,
    # one fewer when a round starts with the value the last one ended with.
    assert 3 <= len(points) <= 4
    plan = Plan(target=Target(engine="mariadb"), servers={"warm_s": 5})
    restarts = restart_estimate(plan, cells)
    assert restarts["restarts"] == len(points) + 1  # the original put back at the end
    assert restarts["seconds"] == round((len(points) + 1) * RESTART_SECONDS["mariadb"]
                                        + 5 * len(points))  # fmt: skip
    plain, e = estimate(cells, "shared"), estimate(cells, "shared", restarts=restarts)
    assert (plain.restarts, plain.to_dict()["restart_text"]) == (0, "")
    assert (e.restarts, e.restart_s) == (len(points) + 1, restarts["seconds"])
    assert e.total_s == pytest.approx(plain.total_s + restarts["seconds"])
    assert e.to_dict()["restart_text"] == duration_text(restarts["seconds"])


def test_the_checkboxes_come_in_the_plans_order_so_that_saving_keeps_it():
    # issue 37: the browser posts checked boxes in page order; the plan's first value is
    # its baseline, so the boxes show the plan's values first, in its order.
    values = form_values(
        threads=[1],
        options={},
        server_settings={"innodb_flush_log_at_trx_commit": ["1", "0"], "sync_binlog": ["1"]},
        option_axes={},
    )
    mysql = values["boxes"]["mysql"]
    assert mysql["innodb_flush_log_at_trx_commit"] == ["1", "0", "2"]
    assert mysql["sync_binlog"] == ["1", "0"]
    assert values["boxes"]["postgresql"]["synchronous_commit"][0] == "on"
    odd = form_values(
        threads=[1], options={}, server_settings={"synchronous_commit": ["remote_apply", "on"]},
        option_axes={},
    )  # fmt: skip
    assert odd["boxes"]["postgresql"]["synchronous_commit"][:3] == ["remote_apply", "on", "off"]


def test_the_estimate_counts_the_runs_the_auto_modes_may_add():
    # issue 37: the editor said "≈ 17 s" for a batch whose threads search took 160 s: it
    # counted the search's first run only.
    cells = expand(
        test="oltp_read_only",
        fixed_options={"time": 10, "tables": 1, "table-size": 10000},
        axes=Axes(threads=[1]),
        repeats=1,
        order="interleaved",
        seed=1,
        dataset_policy="shared",
    )
    plain = estimate(cells, "shared")
    assert (plain.runs, plain.most_runs, plain.to_dict()["most_text"]) == (1, 1, "19 s")

    searched = estimate(cells, "shared", auto_from_dict({"threads": {"max": 8}}))
    # 1, 2, 4, 8 threads, two refining tries, the peak and its neighbours confirmed (3 x 2)
    assert searched.most_runs == 12
    assert plain.total_s is not None
    assert searched.most_s == pytest.approx(plain.total_s + 11 * 13)
    shown = searched.to_dict()
    assert shown["total_text"] == "19 s" and shown["most_text"] == "3 min"

    repeated = estimate(cells, "shared", auto_from_dict({"repeats": {"max": 6}}))
    assert repeated.most_runs == 6
    rate = estimate(cells, "shared", auto_from_dict({"rate": {"start": 100, "max": 800}}))
    # the start, then 3 doublings up to 800 or 7 halvings down to 1 (the longer way), the
    # bisection's 4 tries, both ends of the bracket confirmed (2 more tries each)
    assert rate.most_runs == (1 + 7 + 4) * 1 + 2 * 2


def test_script_options_pass_as_written_spaces_and_equals_kept_and_quotes_taken_off():
    text = 'mysql_table_options="COLLATE latin1_bin"\n--note=a=b c\nscale=10\n'

    values = parse_script_options(text)

    assert values == {"mysql_table_options": "COLLATE latin1_bin", "note": "a=b c", "scale": 10}
    assert parse_script_options(script_options_text(values)) == values
