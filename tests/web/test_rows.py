# ruff: noqa: RUF001  (the rows show the times sign)
"""The long tables' rows written without the template engine (runs/web/templatetags/rows.py)
are the rows the templates wrote, byte for byte: each is rendered both ways, from rows
that take every branch, with text that needs escaping."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

from django.template import Context, Template

from runs.web.templatetags import rows

# The templates' loops as they were before rows.py wrote them.
RUNS_FACTS = '{% for r in results.runs %}\n  <tr id="run-facts-{{ r.id }}">\n    <td class="num">{{ r.position|add:1 }}</td>\n    <td><span class="swatch" style="background: {{ r.colour }}"></span>{{ r.label }}<br><a href="{{ link_base }}{% url \'run_live\' r.id %}">run page</a> · <a href="{{ link_base }}{% url \'run_log\' r.id %}">raw log</a></td>\n    <td>{% if r.outcome %}<span class="status {% if r.outcome == \'forced_shutdown\' %}warning{% elif r.outcome == \'error\' %}error{% else %}{{ r.status }}{% endif %}">{{ r.outcome_text }}</span>{% else %}<span class="status {{ r.status }}">{{ r.status }}</span>{% endif %}\n      {% if r.error and not r.errors and r.outcome != \'forced_shutdown\' %}<br><span class="error">{{ r.error|truncatechars:160 }}</span>{% endif %}\n      {% for e in r.errors %}<br><span class="mono" title="{{ e.message }}{% if e.hint %} — {{ e.hint }}{% endif %}">{% if e.code %}error {{ e.code }}{% else %}{{ e.kind }}{% endif %} × {{ e.count }}</span>{% endfor %}</td>\n    <td class="num">{% if r.tps is not None %}{{ r.tps|num }}{% elif r.events_per_s is not None %}{{ r.events_per_s|num }} ev/s{% endif %}</td>\n    <td class="num">{{ r.qps|num }}</td>\n    <td class="num">{% if r.queries %}{{ r.queries.read|floatformat:"0g" }} / {{ r.queries.write|floatformat:"0g" }} / {{ r.queries.other|floatformat:"0g" }}{% endif %}</td>\n    <td class="num">{% if r.latency %}{{ r.latency.min|num }} / {{ r.latency.avg|num }} / {{ r.latency.max|num }}{% endif %}</td>\n    <td class="num">{% if r.latency.percentile_value is not None %}p{{ r.latency.percentile|floatformat }} {{ r.latency.percentile_value|num }}{% endif %}</td>\n    <td class="num">{{ r.errors_per_s|num }}</td>\n    <td class="num">{{ r.reconnects_per_s|num }}</td>\n    <td>{% if r.fairness %}events {{ r.fairness.events_avg|num }} ± {{ r.fairness.events_stddev|num }}<br>time {{ r.fairness.exec_time_avg|num }} ± {{ r.fairness.exec_time_stddev|num }} s{% endif %}</td>\n    <td>{% for name, value in r.per_transaction %}<span class="mono">{{ name }}</span> {{ value|num }}{% if not forloop.last %}<br>{% endif %}{% endfor %}</td>\n  </tr>\n  {% endfor %}'  # noqa: E501
COUNTERS = '{% for f in results.counters %}{% with d=f.derived %}\n  <tr><td class="num">{{ f.position|add:1 }}</td><td>{{ f.label }}</td><td class="status {{ f.status }}">{{ f.status }}</td>\n    <td class="num">{{ d.rows_read_per_query|default_if_none:""|num }}</td><td class="num">{{ d.log_fsyncs_per_transaction|default_if_none:""|num }}</td>\n    <td class="num">{{ d.data_fsyncs_per_transaction|default_if_none:""|num }}</td><td class="num">{{ d.binlog_commits_per_transaction|default_if_none:""|num }}</td>\n    <td class="num">{{ d.wal_bytes_per_transaction|default_if_none:""|num }}</td></tr>\n  {% endwith %}{% endfor %}'  # noqa: E501
VARIABLES = '{% for k, v in environment.variables %}<tr class="{% if k in environment.differing %}differs{% endif %}"><td class="mono">{{ k }}</td><td class="mono">{{ v|truncatechars:120 }}</td></tr>{% endfor %}'  # noqa: E501
BATCH_LIST = '{% for b in batches %}\n    <tr>\n      <td><input type="checkbox" name="s" value="b{{ b.id }}" data-side aria-label="compare batch {{ b.id }}"></td>\n      <td><a href="{{ b.detail_url }}">{{ b.id }}</a></td>\n      <td>{% if b.plan_id %}<a href="{{ b.plan_url }}">{{ b.plan__name }}</a>{% else %}{{ b.label|default:"imported log" }}{% endif %}</td>\n      <td>{{ b.target__name|default:"—" }}</td>\n      <td class="status {{ b.status }}">{{ b.status }}{% if b.waiting_for %} <span class="muted">({{ b.waiting_for }})</span>{% endif %}</td>\n      <td class="num">{{ b.runs_ran }} / {{ b.runs_total }}{% if b.runs_cancelled %} · {{ b.runs_cancelled }} cancelled{% endif %}{% if b.runs_skipped %} · {{ b.runs_skipped }} skipped{% endif %}</td>\n      <td>{{ b.created_text }}</td>\n      <td>{{ b.launched_by }}{% if b.launched_by_user__username is not None %} · {{ b.launched_by_user__username }}{% endif %}</td>\n      <td>{{ b.finished_text }}</td>\n      <td><a href="{{ b.results_url }}">results</a></td>\n    </tr>\n  {% endfor %}'  # noqa: E501
PICKER = '{% for f in figures %}<label class="inline-label"><input type="checkbox" name="runs" value="{{ f.id }}" {% if f.id in selected %}checked{% endif %}><span class="swatch" style="background: {{ colours|lookup:f.id }}"></span>#{{ f.position|add:1 }} {{ f.label }} <span class="muted">r{{ f.round|add:1 }}</span></label>{% endfor %}'  # noqa: E501

NASTY = (
    "plain",
    "<b>bold</b> & \"quoted\" 'single'",
    "x" * 200,
    "",
    "é ü → ✓",
    "n\u0303" * 70,
    "q\u0307" * 100,
    "q\u0307" * 170,
)  # combining marks: composed or not


def rendered(loop: str, **context: object) -> str:
    return Template("{% load benchdash %}" + loop).render(Context(context))


def maybe(rng: random.Random, value: object) -> object:
    return value if rng.random() < 0.6 else None


def number(rng: random.Random) -> object:
    return rng.choice([None, 0, 0.284, 17.345, 105980.12, 1234567, "", -3.5, 250.0])


def a_run(rng: random.Random, i: int) -> dict:
    return {
        "id": 1000 + i, "position": rng.choice([0, 7, 199]), "colour": rng.choice(["#0072b2", ""]),
        "label": rng.choice(NASTY), "status": rng.choice(["done", "failed", "skipped"]),
        "outcome": rng.choice(["", "ok", "forced_shutdown", "error"]),
        "outcome_text": rng.choice(NASTY), "error": rng.choice(NASTY),
        "errors": [
            {"code": rng.choice(["", "1213", 1062]), "kind": rng.choice(NASTY),
             "count": rng.randint(1, 9), "message": rng.choice(NASTY),
             "hint": rng.choice(["", *NASTY])}
            for _ in range(rng.choice([0, 0, 1, 2]))
        ],
        "tps": number(rng), "qps": number(rng), "events_per_s": number(rng),
        "queries": rng.choice([{}, {"read": 1234567.0, "write": 12.5, "other": 0, "total": 9},
                               {"read": 10}]),
        "latency": rng.choice([{}, {"min": 0.12, "avg": 1.5, "max": 120.5, "percentile": 95,
                                    "percentile_value": 2.3},
                               {"min": 1, "percentile": 99.9, "percentile_value": None},
                               {"percentile": 99.9, "percentile_value": 0}]),
        "errors_per_s": number(rng), "reconnects_per_s": number(rng),
        "fairness": rng.choice([{}, {"events_avg": 1000.5, "events_stddev": 3.2,
                                     "exec_time_avg": 59.99, "exec_time_stddev": 0.01}]),
        "per_transaction": [[rng.choice(NASTY), number(rng)] for _ in range(rng.choice([0, 1, 3]))],
    }  # fmt: skip


def test_the_runs_facts_rows_are_the_templates():
    rng = random.Random(39)
    runs = [a_run(rng, i) for i in range(300)]
    for base in ("", "http://bench.example:8000"):
        expected = rendered(RUNS_FACTS, results={"runs": runs}, link_base=base)
        assert rows.runs_facts_rows(runs, base) == expected


def test_the_counters_rows_are_the_templates():
    rng = random.Random(40)
    names = [*rows.COUNTERS, "other"]
    counters: list[dict[str, Any]] = [
        {"position": rng.randint(0, 300), "label": rng.choice(NASTY), "status": "done",
         "derived": rng.choice([{}, None, {n: number(rng) for n in rng.sample(names, 3)}]),
         "missing": []}
        for _ in range(300)
    ]  # fmt: skip
    assert rows.counters_rows(counters) == rendered(COUNTERS, results={"counters": counters})


def test_the_variables_rows_are_the_templates():
    rng = random.Random(41)
    variables = [(f"v_{i}", rng.choice([*NASTY, 5, 1.5, True, None])) for i in range(650)]
    differing = {"v_3", "v_10", "v_649"}
    environment = {"variables": variables, "differing": differing}
    assert rows.variables_rows(variables, differing) == rendered(VARIABLES, environment=environment)


def test_the_run_picker_is_the_templates():
    rng = random.Random(42)
    figures = [
        SimpleNamespace(id=i, position=i, round=rng.randint(0, 3), label=rng.choice(NASTY))
        for i in range(200)
    ]
    selected = [3, 17, 150]
    colours = {i: "#d55e00" for i in range(0, 200, 2)}
    expected = rendered(PICKER, figures=figures, selected=selected, colours=colours)
    assert rows.run_picker(figures, selected, colours) == expected


def test_the_batch_list_rows_are_the_templates():
    rng = random.Random(43)
    batches = []
    for i in range(200):
        plan_id = rng.choice([None, 3])
        batches.append({
            "id": i, "detail_url": f"/batches/{i}/", "results_url": f"/batches/{i}/results",
            "plan_id": plan_id, "plan__name": rng.choice(NASTY) if plan_id else None,
            "plan_url": "/plans/3/", "label": rng.choice(NASTY),
            "target__name": rng.choice([None, *NASTY]),
            "status": rng.choice(["done", "queued", "cancelled"]),
            "waiting_for": rng.choice(["", "busy with batch 1", "<x>"]),
            "runs_ran": rng.choice([0, 5, None]), "runs_total": rng.choice([8, None]),
            "runs_cancelled": rng.choice([0, 1]), "runs_skipped": rng.choice([0, 7]),
            "created_text": "2026-11-27 07:43",
            "finished_text": rng.choice(["", "2026-11-27 08:00"]),
            "launched_by": rng.choice(["ui", "schedule", "api"]),
            "launched_by_user__username": rng.choice([None, "ana <a>"]),
        })  # fmt: skip
    assert rows.batch_list_rows(batches) == rendered(BATCH_LIST, batches=batches)
