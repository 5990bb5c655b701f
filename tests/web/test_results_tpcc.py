"""A TPC-C batch's results page shows each cell's tpmC, or why there is none, beside its
tps, ignored errors per second and warehouses; another batch's page has no TPC-C section
(issue 48 item 5). Batches stored as a worker leaves them (tests/stored.py's way)."""

from __future__ import annotations

import re

from django.utils import timezone

from runs.analysis.tpcc import NO_NEW_ORDERS
from runs.models import Run, Sample

SIX = "2 \u00d7 3 table sets = 6"  # warehouses x table sets, as the page writes it
MIX = {
    "new_order_per_s": 25.0,
    "payment_per_s": 24.0,
    "order_status_per_s": 2.0,
    "delivery_per_s": 2.0,
    "stock_level_per_s": 2.0,
}


def tpcc_batch(make_batch, script: str, *, mix: bool):
    """A finished batch of sysbench-tpcc's `script`, --scale=2 --tables=3: 1 and 2
    threads, 2 repeats each, 4 samples a run (the first in warmup)."""
    options = {"scale": 2, "tables": 3, "time": 2, "report-interval": 1}
    batch = make_batch(
        params={"test": "", "options": options, "repeats": 2, "warmup_s": 1,
                "script": {"name": "sysbench-tpcc", "content": "-- tpcc"}},
        status="done", started_at=timezone.now(), finished_at=timezone.now(),
    )  # fmt: skip
    cells = [(r, t) for r in range(2) for t in (1, 2)]
    runs = Run.objects.bulk_create(
        Run(
            batch=batch,
            position=p,
            round=r,
            threads=t,
            cell_key=f'{{"threads": {t}}}',
            status="done",
            options=options,
            summary={"tps": 50.0 * t, "errors": 3},
            argv=[
                "sysbench",
                f"/tmp/stage/{script}",
                "--scale=2",
                "--tables=3",
                f"--threads={t}",
                "run",
            ],
        )
        for p, (r, t) in enumerate(cells)
    )
    Sample.objects.bulk_create(
        Sample(
            run=run,
            seq=seq,
            time_s=float(seq),
            threads=run.threads,
            tps=50.0 * run.threads,
            errors_per_s=99.0 if seq == 1 else 0.5,
            in_warmup=seq == 1,
            extra=dict(MIX) if mix else {},
            received_at=timezone.now(),
        )
        for run in runs
        for seq in range(1, 5)
    )
    return batch


def tpcc_rows(html: str) -> list[list[str]]:
    section = re.search(r'<section id="results-tpcc">(.*?)</section>', html, re.S)
    assert section is not None, "no TPC-C section"
    body = section.group(1).split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [
        [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)
    ]


def test_a_tpcc_batch_without_its_mix_shows_its_warehouses_and_why_no_tpmc(client_in, make_batch):
    batch = tpcc_batch(make_batch, "tpcc.lua", mix=False)

    # the first view stores the results, the second is made around the stored part
    for _ in range(2):
        html = client_in.get(f"/batches/{batch.pk}/results").content.decode()

        assert tpcc_rows(html) == [
            ["1 thread", "—", "50.00", "0.50", SIX, "2"],
            ["2 threads", "—", "100.0", "0.50", SIX, "2"],
        ]
        assert NO_NEW_ORDERS.split(":")[0] in html


def test_a_tpcc_batch_that_prints_its_mix_shows_its_tpmc(client_in, make_batch):
    batch = tpcc_batch(make_batch, "tpcc_counters.lua", mix=True)

    html = client_in.get(f"/batches/{batch.pk}/results").content.decode()

    # tpmC is the NewOrder rate (25 a second) times 60; the warmup's errors left out
    assert [row[:5] for row in tpcc_rows(html)] == [
        ["1 thread", "1,500", "50.00", "0.50", SIX],
        ["2 threads", "1,500", "100.0", "0.50", SIX],
    ]
    assert 'id="results-tpcc-no-tpmc"' not in html


def test_another_batch_has_no_tpcc_section(client_in, make_batch):
    batch = make_batch(threads=(1,), repeats=1, samples=3)

    html = client_in.get(f"/batches/{batch.pk}/results").content.decode()

    assert 'id="results-tpcc"' not in html
    assert "tpmC" not in html
