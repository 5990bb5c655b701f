"""The SEMAPHORES section of SHOW ENGINE INNODB STATUS, read from real outputs.

tests/fixtures/innodb/: mariadb_10_11.txt was captured from the private MariaDB 10.11
under an oltp_read_write load; the mysql_* ones are published outputs, their source on
the first line.
"""

from __future__ import annotations

from pathlib import Path

from runs.analysis.why.innodb import parse_semaphores, semaphores_section

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "innodb"


def status(name: str) -> str:
    return (FIXTURES / f"{name}.txt").read_text()


def test_it_reads_the_spin_and_os_wait_figures_of_mysql_8():
    assert parse_semaphores(status("mysql_8_semaphores")) == {
        "os_wait_reservation_count": 42229,
        "os_wait_signal_count": 51515,
        "rw_shared_spins": 351999,
        "rw_shared_rounds": 390104,
        "rw_shared_os_waits": 38812,
        "rw_excl_spins": 68469,
        "rw_excl_rounds": 69194,
        "rw_excl_os_waits": 134,
        "rw_sx_spins": 0,
        "rw_sx_rounds": 0,
        "rw_sx_os_waits": 0,
        "rw_shared_spin_rounds_per_wait": 1.11,
        "rw_excl_spin_rounds_per_wait": 1.01,
        "rw_sx_spin_rounds_per_wait": 0.0,
    }


def test_it_reads_the_mutex_line_and_the_single_os_wait_line_of_mysql_5():
    figures = parse_semaphores(status("mysql_5_semaphores"))
    assert figures["os_wait_reservation_count"] == 2262226
    assert figures["os_wait_signal_count"] == 197284039
    assert (figures["mutex_spins"], figures["mutex_rounds"], figures["mutex_os_waits"]) == (
        318818326,
        300667430,
        883302,
    )
    assert figures["mutex_spin_rounds_per_wait"] == 0.94
    assert figures["rw_excl_spin_rounds_per_wait"] == 50.37
    assert "rw_sx_spins" not in figures


def test_mariadb_10_6_and_later_print_an_empty_section():
    text = status("mariadb_10_11")
    assert "SEMAPHORES" in text
    assert semaphores_section(text) == []
    # the deadlock section that follows holds numbers, none of which is a semaphore figure
    assert parse_semaphores(text) == {}


def test_text_without_the_section_gives_nothing():
    assert parse_semaphores("") == {}
    assert parse_semaphores("SEMAPHORES") == {}
    assert parse_semaphores("RW-shared spins 1, rounds 2, OS waits 3") == {}
