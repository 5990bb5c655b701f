"""A custom script's interface read from sysbench's own words (captured from sysbench
1.0.20 running the probe), its options checked by kind, and its command lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from runs.errors import InvalidInput
from runs.sysbench.command import Connection
from runs.sysbench.options import Kind
from runs.sysbench.parser import parse_text
from runs.sysbench.script_command import ScriptCommand, build_script_command, script_dataset_key
from runs.sysbench.script_options import ScriptInterface, clean_script_options, parse_probe

FIXTURES = Path(__file__).parent.parent / "fixtures" / "sysbench"
CONNECTION = Connection("mariadb", "127.0.0.1", 3307, "", "sbtest", "bench", "s3cret")


def interface(name: str) -> ScriptInterface:
    # Not beside sysbench's outputs: they are the probe's, not a run's.
    return parse_probe((FIXTURES.parent / "lua" / f"probe_{name}.txt").read_text().splitlines())


def test_the_tpcc_shaped_bundle_declares_its_options_and_commands():
    found = interface("tpcc_like")

    assert list(found.options) == ["report_csv", "scale", "tables", "trx_level"]
    assert found.options["scale"].kind is Kind.INT and found.options["scale"].default == 1
    assert found.options["trx_level"].kind is Kind.TEXT
    assert found.options["trx_level"].default == "RC"
    assert found.commands == {"prepare", "cleanup", "check"}
    assert found.has("run") and found.has("check")


def test_a_script_on_oltp_common_has_its_options_and_no_check():
    found = interface("oltp_common")

    assert (
        found.options["skip_trx"].kind is Kind.BOOL and found.options["skip_trx"].default is False
    )
    assert found.options["table_size"].default == 10000
    assert found.commands == {"prepare", "cleanup", "prewarm"}
    assert not found.has("check")


def test_the_interface_survives_a_json_round_trip():
    found = interface("tpcc_like")

    assert ScriptInterface.from_json(found.to_json()) == found


@pytest.mark.parametrize(
    ("values", "field", "words"),
    [
        ({"scale": "ten"}, "script_options.scale", "not a whole number"),
        ({"scale": 1.5}, "script_options.scale", "not a whole number"),
        ({"trx_level": "RC; touch pwned"}, "script_options.trx_level", "not allowed"),
        ({"trx_level": "$(id)"}, "script_options.trx_level", "not allowed"),
        ({"warehouses": 1}, "script_options.warehouses", "has no option 'warehouses'"),
    ],
)
def test_wrong_values_and_unknown_options_are_refused(values, field, words):
    with pytest.raises(InvalidInput, match=words) as refused:
        clean_script_options(interface("tpcc_like"), values)

    assert refused.value.field == field


def test_values_are_made_canonical_and_dashes_are_underscores():
    cleaned = clean_script_options(
        interface("oltp_common"), {"table-size": "100", "skip_trx": "on"}
    )

    assert cleaned == {"skip_trx": True, "table_size": 100}


def command(phase: str, options: dict[str, object] | None = None) -> list[str]:
    script = ScriptCommand(
        path="./tpcc_like.lua",
        interface=interface("tpcc_like"),
        values={"scale": 2, "tables": 1, "report_csv": "yes"},
    )
    built = build_script_command(
        test="oltp_read_write",
        phase=phase,
        options=options or {"threads": 2, "time": 5, "report-interval": 1},
        connection=CONNECTION,
        config_path="./sysbench.cfg",
        script=script,
    )
    assert "s3cret" not in " ".join(built.argv) and "s3cret" in built.config_text
    return built.argv


def test_a_script_runs_with_sysbench_options_and_its_own():
    assert command("run") == [
        "sysbench",
        "--config-file=./sysbench.cfg",
        "./tpcc_like.lua",
        "--threads=2",
        "--time=5",
        "--report-interval=1",
        "--report_csv=yes",
        "--scale=2",
        "--tables=1",
        "run",
    ]


def test_prepare_takes_the_threads_and_check_and_cleanup_the_scripts_options_alone():
    assert command("prepare")[3:] == [
        "--threads=2",
        "--report_csv=yes",
        "--scale=2",
        "--tables=1",
        "prepare",
    ]
    assert command("check")[3:] == ["--report_csv=yes", "--scale=2", "--tables=1", "check"]
    assert command("cleanup")[-1] == "cleanup"


def test_a_test_option_the_script_does_not_declare_is_refused():
    with pytest.raises(InvalidInput, match="declares no table-size") as refused:
        command("run", {"table-size": 100})

    assert refused.value.field == "table-size"


def test_a_command_the_script_lacks_is_refused():
    script = ScriptCommand(path="./x.lua", interface=interface("oltp_common"))

    with pytest.raises(InvalidInput, match="no 'check' command"):
        build_script_command(
            test="oltp_read_write", phase="check", options={}, connection=CONNECTION,
            config_path="./sysbench.cfg", script=script,
        )  # fmt: skip


def test_report_csv_lines_of_a_report_hook_are_samples():
    result = parse_text((FIXTURES / "report_csv_hook.txt").read_text())

    assert [s.time_s for s in result.samples] == [1.0, 2.0, 3.0]
    first = result.samples[0]
    assert (first.threads, first.tps, first.qps, first.latency_ms) == (2, 88.93, 0.0, 0.03)
    assert result.reports and result.unrecognised_lines == 0


def test_a_line_that_only_looks_like_csv_is_not_a_sample():
    result = parse_text("1,2,3\n10,2,88.93,0.00,0.00,0.00,0.00,0.03,0.00\n1,2,a,b,c,d,e,f,g,h\n")

    assert result.samples == []


def help_interface() -> ScriptInterface:
    # sysbench 1.0.20's `help` of the bundle that prints its own report
    # (tests/fixtures/lua/tpcc_print/): its options, no command marks.
    return parse_probe((FIXTURES.parent / "lua" / "help_tpcc_print.txt").read_text().splitlines())


@pytest.mark.parametrize(
    ("given", "passed"),
    [
        ('"COLLATE latin1_bin"', "COLLATE latin1_bin"),  # as the script's help writes it
        ("'COLLATE latin1_bin'", "COLLATE latin1_bin"),
        ("COLLATE latin1_bin", "COLLATE latin1_bin"),
        ("ENGINE=InnoDB ROW_FORMAT=COMPRESSED", "ENGINE=InnoDB ROW_FORMAT=COMPRESSED"),
        ("PARTITION BY HASH(w_id) PARTITIONS 4", "PARTITION BY HASH(w_id) PARTITIONS 4"),
        ("COMMENT='a b'", "COMMENT='a b'"),
    ],
)
def test_a_text_value_with_spaces_or_equals_reaches_argv_as_one_argument(given, passed):
    built = build_script_command(
        test="oltp_read_write",
        phase="run",
        options={"threads": 1, "time": 1},
        connection=CONNECTION,
        config_path="./sysbench.cfg",
        script=ScriptCommand(
            path="./tpcc_print.lua",
            interface=help_interface(),
            values={"mysql_table_options": given},
        ),
    )

    assert built.argv[-2:] == [f"--mysql_table_options={passed}", "run"]


@pytest.mark.parametrize(
    "value",
    ["COLLATE x; DROP TABLE t", "$(id)", "`id`", "a\nb", "a\tb", 'say "x"', "a|b", "a & b"],
)
def test_a_text_value_with_a_shell_character_or_a_line_break_is_still_refused(value):
    with pytest.raises(InvalidInput, match="not allowed") as refused:
        clean_script_options(help_interface(), {"mysql_table_options": value})

    assert refused.value.field == "script_options.mysql_table_options"


def test_a_quoted_number_is_a_number():
    assert clean_script_options(help_interface(), {"scale": '"3"'}) == {"scale": 3}


def test_a_scripts_data_set_is_named_by_the_script_and_the_options_its_prepare_takes():
    script = ScriptCommand(
        path="/tmp/x/tpcc_like.lua",
        interface=interface("tpcc_like"),
        values={"scale": 2, "trx_level": "RR"},
    )

    key = script_dataset_key(
        test="oltp_read_write", options={"threads": 8, "time": 60, "tables": 3}, script=script
    )

    assert key == ("tpcc_like.lua", "scale=2", "tables=3", "trx_level=RR")
