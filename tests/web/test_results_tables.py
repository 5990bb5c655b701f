# ruff: noqa: RUF001  (the cells show the en dash)
"""The rows of the report table and the relative table written without the template engine
(runs/web/templatetags/results_tables.py) are the rows the templates wrote, byte for byte:
each is rendered both ways, from rows that take every branch, with text that needs
escaping. The report table's loop includes the verdict cell's template, which the compare
page still includes: the two stay one."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

from runs.web.templatetags import results_tables
from tests.web.test_rows import NASTY, number, rendered

# The templates' loops as they were before results_tables.py wrote them.
TABLE = '{% for row in results.table %}\n  <tr class="{% if row.first_of_threads %}group-start{% endif %}{% if row.is_baseline %} baseline{% endif %}">\n    {% if row.first_of_threads %}<td class="num" rowspan="{{ row.rows_for_threads }}"><strong>{{ row.threads }}</strong></td>{% endif %}\n    <td><span class="swatch" style="background: {{ row.series.colour }}"></span>{{ row.series.label }}</td>\n    <td class="num">{{ row.point.mean|num }}</td>\n    <td class="num muted">{% if row.point.n > 1 %}{{ row.point.low|num }}–{{ row.point.high|num }}{% endif %}</td>\n    <td class="num">{{ row.point.qps|num }}</td>\n    <td class="num">{{ row.point.latency_ms|num }}</td>\n    <td class="num">{% if row.point.errors %}<span class="error">{{ row.point.errors|floatformat:0 }}</span>{% elif row.point.errors is not None %}0{% endif %}{% if row.point.failed %} <span class="badge bad">{{ row.point.failed }} failed</span>{% endif %}{% if row.point.forced_shutdowns %} <span class="badge warn" title="sysbench stopped the threads at --time (--forced-shutdown); the results stand">{{ row.point.forced_shutdowns }} forced shutdown, {{ row.point.unfinished }} unfinished</span>{% endif %}</td>\n    <td class="num">{% if row.is_baseline %}<span class="muted">1.00</span>{% else %}{{ row.ratio|ratio }}{% endif %}</td>\n    <td class="num">{{ row.point.n }}</td>\n    {% include "runs/_results_verdict_cell.html" with v=row.verdict is_baseline=row.is_baseline %}\n  </tr>\n  {% endfor %}'  # noqa: E501
RELATIVE = '{% for family in relative.families %}{% for row in family.rows %}\n  <tr{% if forloop.first %} class="group-start"{% endif %}>\n    {% if forloop.first %}<td rowspan="{{ family.rows|length }}"><strong>{{ family.name }}</strong></td>{% endif %}\n    <td>{{ row.label }}</td>\n    {% for cell in row.cells %}\n    <td class="num group-start"{% if cell.tone %} style="background: {{ cell.tone }}"{% endif %}{% if cell.verdict %} title="{{ cell.verdict.text }}{% if cell.verdict.interval %}, 95 % CI {{ cell.verdict.interval }}{% endif %}{% if cell.verdict.correction %}; {{ cell.verdict.correction }}{% endif %}{% if cell.verdict.caveat %}; {{ cell.verdict.caveat }}{% endif %}"{% endif %}>\n      {% if forloop.first %}{{ cell.throughput|num }}{% elif cell.verdict %}{{ cell.verdict.ratio|ratio }}<br><small>{{ cell.verdict.interval }} · {{ cell.verdict.text }}</small>{% else %}<span class="muted">–</span>{% endif %}</td>\n    <td class="num">{% if forloop.first %}{{ cell.qps|num }}{% else %}{{ cell.rqps|ratio }}{% endif %}</td><td class="num"><span class="per-tx">{{ cell.per_tx.cpu_us|num }}</span><span class="per-query">{{ cell.per_query.cpu_us|num }}</span></td><td class="num"><span class="per-tx">{{ cell.per_tx.csw|num }}</span><span class="per-query">{{ cell.per_query.csw|num }}</span></td><td class="num"{% if cell.per_tx.io_source %} title="{{ cell.per_tx.io_source }}{% if cell.per_tx.io_why %} ({{ cell.per_tx.io_why }}){% endif %}" data-io="{{ cell.per_tx.io_source }}"{% endif %}><span class="per-tx">{{ cell.per_tx.read_kb|num }}</span><span class="per-query">{{ cell.per_query.read_kb|num }}</span></td><td class="num"{% if cell.per_tx.io_source %} title="{{ cell.per_tx.io_source }}{% if cell.per_tx.io_why %} ({{ cell.per_tx.io_why }}){% endif %}" data-io="{{ cell.per_tx.io_source }}"{% endif %}><span class="per-tx">{{ cell.per_tx.write_kb|num }}</span><span class="per-query">{{ cell.per_query.write_kb|num }}</span></td>\n    {% endfor %}\n  </tr>\n  {% endfor %}{% endfor %}'  # noqa: E501


IO_TEXT = [t for t in NASTY if isinstance(t, str) and t]  # io_source, io_why: strings


def text(rng: random.Random) -> Any:
    return rng.choice([*NASTY, None, 0, 2.5])


def a_verdict(rng: random.Random) -> dict[str, Any]:
    return {
        "verdict": rng.choice(["faster", "slower", "no significant difference", "no ratio"]),
        "text": text(rng), "difference": text(rng), "interval": rng.choice(["", *NASTY]),
        "power": rng.choice(["", None, *NASTY]), "caveat": rng.choice(["", *NASTY]),
        "basis": rng.choice(["repeats", "intervals"]), "ratio": rng.choice([None, 1.604867]),
    }  # fmt: skip


def a_table_row(rng: random.Random) -> dict[str, Any]:
    return {
        "threads": rng.choice([1, 64]), "rows_for_threads": rng.choice([1, 3]),
        "series": {"key": "k", "label": text(rng), "colour": rng.choice(["#0072b2", "", "<"])},
        "point": {
            "mean": number(rng), "low": number(rng), "high": number(rng),
            "n": rng.choice([None, 0, 1, 2, 10]), "qps": number(rng),
            "latency_ms": number(rng), "errors": rng.choice([None, 0, 0.0, 3.4, 12]),
            "failed": rng.choice([0, 2]), "forced_shutdowns": rng.choice([0, 1]),
            "unfinished": rng.choice([0, 200, None]),
        },
        "ratio": rng.choice([None, 1.0, 0.6213, ""]),
        "verdict": rng.choice([None, {}, a_verdict(rng)]),
        "is_baseline": rng.random() < 0.2, "first_of_threads": rng.random() < 0.4,
    }  # fmt: skip


def test_the_report_table_rows_are_the_templates() -> None:
    rng = random.Random(44)
    table = [a_table_row(rng) for _ in range(300)]
    assert results_tables.report_table_rows(table) == rendered(TABLE, results={"table": table})


def a_cell(rng: random.Random) -> SimpleNamespace:
    verdict = rng.choice([None, SimpleNamespace(**a_verdict(rng), correction=text(rng))])
    per_tx = SimpleNamespace(cpu_us=number(rng), csw=number(rng), read_kb=number(rng),
                             write_kb=number(rng), io_why=rng.choice(["", *IO_TEXT]),
                             io_source=rng.choice(["", "server process", *IO_TEXT]))  # fmt: skip
    per_query = SimpleNamespace(cpu_us=number(rng), csw=number(rng), read_kb=number(rng),
                                write_kb=number(rng))  # fmt: skip
    return SimpleNamespace(throughput=number(rng), verdict=verdict, per_tx=per_tx,
                           per_query=per_query, qps=number(rng),
                           rqps=rng.choice([None, 1.0, 0.6213, 2.5]),
                           tone=rng.choice(["", "#e5f5e0", "<x>"]))  # fmt: skip


def test_the_relative_rows_are_the_templates() -> None:
    rng = random.Random(45)
    families = [
        SimpleNamespace(name=text(rng), rows=[
            SimpleNamespace(label=text(rng), cells=[a_cell(rng) for _ in range(rng.choice([1, 3]))])
            for _ in range(rng.choice([1, 2, 10]))
        ])
        for _ in range(12)
    ]  # fmt: skip
    relative = SimpleNamespace(families=families)
    expected = rendered(RELATIVE, relative=relative)
    assert results_tables.relative_rows(relative) == expected  # type: ignore[arg-type]
