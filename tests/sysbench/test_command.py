"""The sysbench command builder and its option whitelist (no database needed)."""

import subprocess

import pytest

from runs.errors import InvalidInput
from runs.sysbench.command import (
    Connection,
    build_command,
    checked_host,
    dataset_key,
    dataset_reusable,
    has_dataset,
)
from runs.sysbench.options import NON_SQL_TESTS, SQL_TESTS, is_sql_test, options_for
from runs.sysbench.values import clean_option, clean_options

MARIADB = Connection(
    engine="mariadb",
    host="db1.example.com",
    port=3307,
    socket="",
    database="shopdb",
    user="loaduser",
    password="s3cret-Pa55",
)
POSTGRES = Connection(
    engine="postgresql",
    host="10.0.0.7",
    port=5432,
    socket="",
    database="bench",
    user="postgres",
    password="pg-secret",
)


def build(test="oltp_insert", phase="run", options=None, connection=MARIADB, **kwargs):
    return build_command(
        test=test,
        phase=phase,
        options={"threads": 2} if options is None else options,
        connection=connection,
        config_path="/tmp/bd/sysbench.cfg",
        **kwargs,
    )


def connection(**changes):
    fields = {**MARIADB.__dict__, **changes}
    return Connection(**fields)


def refused(field):
    return pytest.raises(InvalidInput, match=rf"^{field}: ")


# --- argv and config file ----------------------------------------------------------------


def test_run_argv_reads_like_a_sysbench_command_line():
    command = build(options={"threads": 4, "time": 60, "report-interval": 3, "table-size": 1000})
    assert command.argv == [
        "sysbench",
        "--config-file=/tmp/bd/sysbench.cfg",
        "oltp_insert",
        "--threads=4",
        "--time=60",
        "--report-interval=3",
        "--table-size=1000",
        "run",
    ]


def test_the_password_never_reaches_argv():
    command = build()
    joined = " ".join(command.argv)
    for secret in ("s3cret-Pa55", "loaduser", "db1.example.com", "3307", "shopdb", "mysql"):
        assert secret not in joined
    assert "mysql-password=" in command.config_text


def test_config_file_holds_the_mysql_connection():
    assert build().config_text == (
        "db-driver=mysql\n"
        'mysql-host="db1.example.com"\n'
        "mysql-port=3307\n"
        'mysql-user="loaduser"\n'
        'mysql-password="s3cret-Pa55"\n'
        'mysql-db="shopdb"\n'
    )


def test_postgresql_targets_use_the_pgsql_driver_options():
    assert build(connection=POSTGRES).config_text == (
        "db-driver=pgsql\n"
        'pgsql-host="10.0.0.7"\n'
        "pgsql-port=5432\n"
        'pgsql-user="postgres"\n'
        'pgsql-password="pg-secret"\n'
        'pgsql-db="bench"\n'
    )


def test_a_socket_replaces_host_and_port():
    mysql = build(connection=connection(host="", port=None, socket="/run/mysqld/mysqld.sock"))
    assert 'mysql-socket="/run/mysqld/mysqld.sock"\n' in mysql.config_text
    assert "mysql-host" not in mysql.config_text
    assert "mysql-port" not in mysql.config_text
    # libpq takes the socket directory as its host
    pg = build(connection=Connection("postgresql", "", None, "/var/run/postgresql", "b", "u", ""))
    assert 'pgsql-host="/var/run/postgresql"\n' in pg.config_text


def test_a_missing_port_is_left_to_the_driver_default():
    assert "mysql-port" not in build(connection=connection(port=None)).config_text


def test_repr_never_shows_the_password():
    assert "s3cret" not in repr(build())
    assert "s3cret" not in repr(MARIADB)


def test_awkward_passwords_are_quoted_so_sysbench_reads_them_whole():
    text = build(connection=connection(password='a b,c#d"e')).config_text
    assert "mysql-password='a b,c#d\"e'\n" in text
    with refused("password"):
        build(connection=connection(password='it\'s "both"'))


def test_sysbench_reads_back_the_exact_connection_from_the_config_file(tmp_path):
    password = "sp ace,comma#hash=eq'q"
    command = build(connection=connection(password=password, user="bench_user"))
    config = tmp_path / "sysbench.cfg"
    config.write_text(command.config_text)
    script = tmp_path / "show.lua"
    script.write_text(
        "function prepare()\n"
        '  print("user=[" .. sysbench.opt.mysql_user .. "]")\n'
        '  print("password=[" .. sysbench.opt.mysql_password .. "]")\n'
        '  print("db=[" .. sysbench.opt.mysql_db .. "]")\n'
        "end\n"
    )
    result = subprocess.run(
        ["sysbench", f"--config-file={config}", str(script), "prepare"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert f"password=[{password}]" in result.stdout
    assert "user=[bench_user]" in result.stdout
    assert "db=[shopdb]" in result.stdout


def test_a_built_cpu_command_runs_in_real_sysbench(tmp_path):
    config = tmp_path / "sysbench.cfg"
    command = build_command(
        test="cpu",
        phase="run",
        options={"threads": 1, "time": 0, "events": 200, "cpu-max-prime": 2000},
        connection=None,
        config_path=str(config),
    )
    config.write_text(command.config_text)
    result = subprocess.run(command.argv, capture_output=True, text=True, timeout=60, check=True)
    assert "Prime numbers limit: 2000" in result.stdout
    assert "total number of events:              200" in result.stdout


def test_config_lines_too_long_for_sysbench_are_refused():
    # sysbench reads its config file with fgets(buf, 256): a longer line would be split.
    with refused("password"):
        build(connection=connection(password="x" * 300))
    assert build(connection=connection(password="x" * 230)).config_text


# --- refusing what could break out ------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("mysql-storage-engine", "; touch pwned"),
        ("mysql-storage-engine", "$(id)"),
        ("mysql-storage-engine", "innodb --debug"),
        ("mysql-storage-engine", "innodb\n--mysql-host=evil"),
        ("mysql-storage-engine", "`id`"),
        ("forced-shutdown", "5; reboot"),
        ("table-size", "10 --events=1"),
        ("threads", "4 && rm -rf /"),
        ("report-checkpoints", "10,$(id)"),
        ("mysql-ignore-errors", "all;id"),
        ("rand-type", "uniform|sh"),
    ],
)
def test_shell_metacharacters_are_refused(name, value):
    with refused(name):
        build(options={name: value})


@pytest.mark.parametrize(
    ("field", "changes"),
    [
        ("host", {"host": "db;touch pwned"}),
        ("host", {"host": "db1 --mysql-db=x"}),
        ("user", {"user": "$(id)"}),
        ("database", {"database": "sb\ntest"}),
        ("socket", {"host": "", "socket": "relative.sock"}),
        ("password", {"password": "pw\nmysql-host=evil"}),
        ("port", {"port": 0}),
        ("engine", {"engine": "oracle"}),
        ("socket", {"socket": "/run/mysqld.sock"}),  # both host and socket
        ("host", {"host": ""}),  # neither
    ],
)
def test_connection_fields_that_could_break_out_are_refused(field, changes):
    with refused(field):
        build(connection=connection(**changes))


def test_the_executable_and_config_path_must_be_plain_paths():
    with refused("executable"):
        build(executable="sysbench; id")
    with refused("config_path"):
        build_command(
            test="cpu", phase="run", options={}, connection=None, config_path="--debug=on"
        )


# --- the whitelist ------------------------------------------------------------------------


@pytest.mark.parametrize("threads", [0, -1, "0", True, "two", 1.5])
def test_threads_must_be_a_whole_number_of_at_least_one(threads):
    with refused("threads"):
        build(options={"threads": threads})


def test_unknown_options_are_refused_by_name():
    with pytest.raises(InvalidInput) as error:
        build(options={"warmup-time": 10})
    assert error.value.field == "warmup-time"
    assert error.value.message == "unknown option 'warmup-time'"


def test_old_spellings_get_a_hint():
    with pytest.raises(InvalidInput, match=r"did you mean 'table-size'"):
        build(options={"table_size": 10})
    with pytest.raises(InvalidInput, match=r"did you mean 'threads'"):
        build(options={"num-threads": 10})


def test_options_of_other_tests_are_refused():
    with pytest.raises(InvalidInput) as error:
        build(options={"cpu-max-prime": 20000})
    assert str(error.value) == "cpu-max-prime: not an option of test oltp_insert"
    with refused("point-selects"):
        build(options={"point-selects": 5})  # oltp_insert runs no point selects


def test_unknown_tests_are_refused():
    with refused("test"):
        build(test="oltp_legacy")


def test_values_are_checked_against_their_range():
    with pytest.raises(InvalidInput, match=r"^percentile: must be at most 100, not 101$"):
        clean_option("oltp_read_only", "percentile", 101)
    with refused("table-size"):
        clean_option("oltp_read_only", "table-size", 2**31)
    with refused("file-total-size"):
        clean_option("fileio", "file-total-size", "0")
    with refused("file-total-size"):
        clean_option("fileio", "file-total-size", "8MB")


def test_values_are_rendered_the_way_sysbench_reads_them():
    cleaned = clean_options(
        "oltp_read_write",
        {
            "skip-trx": True,
            "histogram": "off",
            "report-checkpoints": "60,10",
            "mysql-ignore-errors": [1213, "1020"],
            "forced-shutdown": 5,
        },
    )
    argv = build(test="oltp_read_write", options=cleaned).argv
    assert argv[3:-1] == [
        "--histogram=off",
        "--report-checkpoints=10,60",
        "--forced-shutdown=5",
        "--mysql-ignore-errors=1020,1213",
        "--skip-trx=on",
    ]
    fileio = clean_options("fileio", {"file-total-size": "8m", "file-extra-flags": "direct,sync"})
    assert fileio == {"file-total-size": "8M", "file-extra-flags": "sync,direct"}
    assert clean_option("fileio", "file-rw-ratio", "2.5") == 2.5


def test_argv_does_not_depend_on_the_order_options_come_in():
    one = build(options={"time": 10, "threads": 2, "tables": 4, "rate": 100})
    two = build(options={"rate": 100, "tables": 4, "threads": 2, "time": 10})
    assert one.argv == two.argv


def test_select_random_tests_need_a_single_table():
    with pytest.raises(InvalidInput, match=r"^tables: select_random_ranges works on a single"):
        clean_option("select_random_ranges", "tables", 2)


def test_mysql_only_options_are_refused_for_postgresql():
    with refused("mysql-ignore-errors"):
        build(options={"mysql-ignore-errors": "all"}, connection=POSTGRES)
    assert build(options={"mysql-ignore-errors": "all"}).argv[3] == "--mysql-ignore-errors=all"


def test_test_lists_and_option_lists():
    assert len(SQL_TESTS) == 11
    assert NON_SQL_TESTS == ("cpu", "fileio", "memory", "threads", "mutex")
    assert is_sql_test("bulk_insert")
    assert not is_sql_test("fileio")
    assert [s.name for s in options_for("threads")][-2:] == ["thread-yields", "thread-locks"]


# --- phases -------------------------------------------------------------------------------


def test_prepare_gets_only_the_data_set_options():
    options = {"threads": 16, "time": 60, "report-interval": 3, "tables": 4, "table-size": 1000}
    argv = build(test="oltp_read_write", phase="prepare", options=options).argv
    # threads beyond the table count would only hold idle connections
    assert argv[3:] == ["--threads=4", "--tables=4", "--table-size=1000", "prepare"]


def test_cleanup_needs_only_the_table_count():
    options = {"threads": 16, "time": 60, "tables": 4, "table-size": 1000}
    argv = build(test="oltp_read_write", phase="cleanup", options=options).argv
    assert argv[3:] == ["--tables=4", "cleanup"]


def test_bulk_insert_prepares_one_table_per_thread():
    argv = build(test="bulk_insert", phase="prepare", options={"threads": 8, "time": 5}).argv
    assert argv[3:] == ["--threads=8", "prepare"]


def test_fileio_prepares_files_and_needs_a_mode_to_run():
    options = {"file-num": 4, "file-total-size": "64M", "file-block-size": "4K"}
    prepare = build(test="fileio", phase="prepare", options=options, connection=None)
    assert prepare.argv[3:] == ["--file-num=4", "--file-total-size=64M", "prepare"]
    assert prepare.config_text == ""
    with refused("file-test-mode"):
        build(test="fileio", options=options, connection=None)
    run = build(test="fileio", options={**options, "file-test-mode": "rndrw"}, connection=None)
    assert run.argv[-2:] == ["--file-test-mode=rndrw", "run"]


def test_sql_tests_need_a_target_and_others_ignore_it():
    with refused("target"):
        build(connection=None)
    assert build(test="memory", options={}, connection=MARIADB).config_text == ""


def test_tests_without_a_data_set_have_no_prepare_phase():
    with pytest.raises(InvalidInput, match=r"^phase: cpu has no data set"):
        build(test="cpu", phase="prepare", connection=None)
    with refused("phase"):
        build(phase="warmup")


def test_a_run_must_be_able_to_stop():
    with pytest.raises(InvalidInput, match=r"^time: time and events cannot both be 0"):
        build(options={"time": 0})
    assert build(options={"time": 0, "events": 1000}).argv[-3:] == [
        "--time=0",
        "--events=1000",
        "run",
    ]


# --- data sets ----------------------------------------------------------------------------


def test_oltp_tests_share_one_data_set_family():
    options = {"tables": 4, "table-size": 1000}
    key = dataset_key("oltp_read_only", options)
    assert key == (
        "oltp",
        "tables=4",
        "table-size=1000",
        "secondary=off",
        "create-secondary=on",
        "auto-inc=on",
        "mysql-storage-engine=innodb",
    )
    assert dataset_key("oltp_insert", options) == key
    assert dataset_key("select_random_points", {"table-size": 1000}) != key


def test_defaults_and_run_options_do_not_split_a_data_set():
    assert dataset_key("oltp_read_write", {}) == dataset_key(
        "oltp_read_write", {"tables": 1, "table-size": "10000", "threads": 64, "time": 300}
    )


def test_schema_options_split_a_data_set():
    plain = dataset_key("oltp_read_write", {})
    assert dataset_key("oltp_read_write", {"secondary": True}) != plain
    assert dataset_key("oltp_read_write", {"mysql-storage-engine": "myisam"}) != plain


def test_fileio_data_sets_compare_sizes_in_bytes():
    assert dataset_key("fileio", {"file-total-size": "1G"}) == (
        "fileio",
        "file-num=128",
        "file-total-size=1073741824",
    )
    assert dataset_key("fileio", {"file-total-size": "1024M", "file-test-mode": "seqrd"}) == (
        dataset_key("fileio", {"file-total-size": "1G"})
    )


def test_bulk_insert_data_set_depends_on_threads_and_is_never_reused():
    assert dataset_key("bulk_insert", {"threads": 8}) == ("bulk_insert", "threads=8")
    assert not dataset_reusable("bulk_insert")
    assert dataset_reusable("oltp_insert")


def test_tests_without_a_data_set_have_an_empty_key():
    assert dataset_key("cpu", {"cpu-max-prime": 20000}) == ()
    assert not has_dataset("mutex")
    assert has_dataset("fileio")


# --- custom Lua scripts --------------------------------------------------------------------


def test_a_script_takes_the_place_of_the_test_name():
    command = build(script_path="./script.lua", options={"threads": 2})
    assert command.argv[:3] == ["sysbench", "--config-file=/tmp/bd/sysbench.cfg", "./script.lua"]
    assert command.argv[3:] == ["--threads=2", "run"]
    assert "mysql-password=" in command.config_text  # the test still decides the connection


@pytest.mark.parametrize("path", ["./script", "x.lua; id", "--help.lua", "$(id).lua", "a\nb.lua"])
def test_script_paths_must_be_plain_lua_files(path):
    with refused("script_path"):
        build(script_path=path)


@pytest.mark.parametrize(
    "host", ["db1", "db1.example.com", "db1.example.com.", "10.0.0.7", "::1", "fe80::1", "my_db"]
)
def test_a_host_name_or_an_ip_address_is_taken(host):
    assert checked_host("host", host) == host


@pytest.mark.parametrize(
    ("host", "why"),
    [
        ("bad..host", "not a host name"),
        (".db1", "not a host name"),
        ("-oProxyCommand=x", "not a host name"),
        ("db 1", "not a host name"),
        ("db\x001", "not a host name"),
        ("d\u00e9j\u00e0", "not a host name"),
        ("a" * 64 + ".example.com", "not a host name"),
        ("::g", "not an IPv6 address"),
        ("", "give a host name"),
    ],
)
def test_a_host_no_resolver_can_use_is_refused_naming_the_field(host, why):
    with pytest.raises(InvalidInput, match=why) as refused:
        checked_host("address", host)
    assert refused.value.field == "address"
