"""The compare page sets a batch's series in its plan's order (issue 47): the values of
an axis as the user listed them, not the alphabet's, as the results page does."""

from __future__ import annotations

from runs.services.answers import compare


def test_a_batchs_series_are_compared_in_its_plans_order(make_batch):
    batch = make_batch(threads=(1,), repeats=3, samples=5)
    # the user listed flush=2 first: the baseline, and first on every page
    batch.params = {
        **batch.params,
        "server_settings": {"innodb_flush_log_at_trx_commit": ["2", "1"]},
    }
    batch.save(update_fields=["params"])
    key = f"b{batch.pk}"

    found = compare.sides_compare(keys=[key, key])

    labels = [s.label for s in found.sides[0].series]
    assert labels == ["flush=2", "flush=1"], labels
    assert [r.label for r in found.pairs[0].rows] == ["flush=2", "flush=1"]
    assert [line["label"] for line in found.chart] == [f"{key} · {label}" for label in labels] * 2
