"""The rule that tells a run that changed its tables' rows by more than 1 %: the counts
of an oltp_delete run measured on a private MariaDB (10,000 rows, 1 thread, 3 s: 3,694
rows gone), of an oltp_insert run (9,424 added), and the edges around 1 %."""

import pytest

from runs.analysis.row_counts import (
    EXACT_LIMIT,
    TABLES_LIMIT,
    RowCounts,
    counting,
    rows_fact,
    rows_warning,
)


def counts(before: int, after: int, *, size: int = 10_000, tables: int = 1) -> RowCounts:
    return RowCounts(tables, size, before={"sbtest1": before}, after={"sbtest1": after})


def test_a_delete_that_emptied_a_third_of_the_table_is_told_with_what_to_do():
    said = rows_warning("oltp_delete", counts(10_000, 6_306))
    assert said is not None
    assert said.startswith("oltp_delete removed 3,694 of 10,000\u00d71 rows (\u221237 %)")
    assert "the runs after it on this data set measure fewer rows" in said
    assert "delete-inserts=1" in said and "rebuild" in said


def test_a_table_already_shrunk_is_named_with_what_the_run_found():
    said = rows_warning("oltp_delete", counts(6_306, 5_657))
    assert said is not None
    assert "removed 649 of 6,306 (prepared: 10,000\u00d71) rows (\u221210 %)" in said


def test_an_insert_on_a_data_set_rebuilt_before_each_run_is_a_fact_not_a_warning():
    # Its growth is its own work: no other run, nor its next repeat, measures it.
    assert rows_warning("oltp_insert", counts(10_000, 19_424), rebuilds=True) is None
    fact = rows_fact("oltp_insert", counts(10_000, 19_424), rebuilds=True)
    assert fact == (
        "oltp_insert added 9,424 rows to 10,000\u00d71 (+94 %), its own work: its data set is "
        "prepared again before each of its runs"
    )


def test_an_insert_on_the_shared_data_set_still_warns():
    assert rows_fact("oltp_insert", counts(10_000, 19_424), rebuilds=False) is None
    shared = rows_warning("oltp_insert", counts(10_000, 19_424))
    assert shared is not None and "give the item rebuild" in shared


def test_a_delete_or_an_update_on_a_rebuilt_data_set_still_warns():
    for test, after in (("oltp_delete", 6_306), ("oltp_write_only", 10_500)):
        assert rows_fact(test, counts(10_000, after), rebuilds=True) is None
        said = rows_warning(test, counts(10_000, after), rebuilds=True)
        assert said is not None and "on its own data set measure" in said


@pytest.mark.parametrize(
    ("after", "told"),
    [(10_000, False), (9_900, False), (10_100, False), (9_899, True), (10_101, True)],
)
def test_one_percent_is_the_edge(after, told):
    assert (rows_warning("oltp_write_only", counts(10_000, after)) is not None) is told


def test_all_tables_count_together():
    two = RowCounts(
        2, 1000, before={"sbtest1": 1000, "sbtest2": 1000}, after={"sbtest1": 1000, "sbtest2": 960}
    )
    assert two.change_pct == pytest.approx(-2.0)
    said = rows_warning("oltp_delete", two)
    assert said is not None and "removed 40 of 1,000\u00d72 rows" in said


def test_what_was_not_counted_both_times_says_nothing():
    assert rows_warning("oltp_delete", RowCounts(1, 10_000, before={"sbtest1": 10_000})) is None
    skipped = counts(10_000, 5_000).skip("rows not counted after the run: gone")
    assert rows_warning("oltp_delete", skipped) is None


def test_a_large_data_set_is_not_counted_and_says_why():
    assert not counting(tables=1, table_size=EXACT_LIMIT).skipped
    big = counting(tables=8, table_size=10_000_000)
    assert big.skipped.startswith("rows not counted: 10,000,000\u00d78 = 80,000,000 rows")
    assert big.to_json() == {"tables": 8, "table_size": 10_000_000, "skipped": big.skipped}


def test_many_small_tables_are_not_counted_and_say_why():
    assert not counting(tables=TABLES_LIMIT, table_size=10).skipped
    many = counting(tables=100_000, table_size=1)  # 100,000 statements before and after
    assert many.skipped.startswith("rows not counted: 100,000 tables")


def test_the_record_reads_back_as_written():
    record = counts(10_000, 6_306)
    assert RowCounts.load(record.to_json()) == record
    assert record.to_json()["exact"] is True
    assert RowCounts.load(None) is None
