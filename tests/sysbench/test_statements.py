"""The prepared statements a test holds, counted as sysbench 1.0.20's Lua scripts prepare
them; measured on MariaDB 10.11 at the limit and one below it (1461): oltp_read_write 2
threads x 4 tables 76, oltp_read_only 1 x 4 22, oltp_write_only 1 x 4 18, oltp_point_select
1 x 4 4."""

from runs.sysbench.statements import prepared_statements, statements_per_thread


def test_read_write_prepares_nine_a_table_and_begin_commit():
    assert prepared_statements("oltp_read_write", 2, {"tables": 4}) == 76
    assert statements_per_thread("oltp_read_write", {"tables": 16}) == 146


def test_the_options_that_prepare_fewer():
    assert statements_per_thread("oltp_read_write", {"tables": 4, "range-selects": False}) == 22
    assert statements_per_thread("oltp_read_write", {"tables": 4, "skip-trx": True}) == 36
    assert statements_per_thread("oltp_read_only", {"tables": 2}) == 12
    assert statements_per_thread("oltp_write_only", {"tables": 2}) == 10
    assert statements_per_thread("oltp_point_select", {"tables": 3}) == 3
    assert statements_per_thread("select_random_points", {}) == 1


def test_nothing_is_prepared_without_prepared_statements():
    assert prepared_statements("oltp_read_write", 64, {"tables": 16, "db-ps-mode": "disable"}) == 0
    assert prepared_statements("oltp_insert", 64, {"tables": 16}) == 0
    assert prepared_statements("cpu", 4, {}) == 0
