"""A finished batch's answer, built once and served as stored.

A batch that ended does not change, yet its results page, its results in the API and its
report were built again on every request (116 to 314 ms of server CPU each). When a batch
ends, its answer for the default view (the first series as the baseline) is built by the
one builder, runs/services/answers/results.py, and stored as a StoredResults: the results as the
API and the report read them (BatchResults.to_json) and the part of the results page below
its header, rendered (rendering the tables and charts' data of a 200-run page alone costs
more than the 30 ms the whole page may take). Another baseline (?baseline=) is stored the
first time it is asked for.

A stored answer is served only while it is newer than the batch's end and was made by the
code now running (stored_version(): a digest of the sources an answer is made from, the
first part of its etag, so an upgrade rebuilds it on its first request). A batch that ends
again (resumed, imported) replaces its answers; runs edited in the admin forget them, and
so does a change of its target's cores or disks (the reference line reads them). Live
batches, and the page's views that are not stored (runs chosen, a counter shown), are built
on each request and carry no ETag.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from django.db import transaction
from django.db.models import (
    Case,
    F,
    FilteredRelation,
    JSONField,
    Q,
    QuerySet,
    TextField,
    Value,
    When,
)
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast, Coalesce
from django.template.loader import render_to_string

from runs import json_text
from runs.analysis import comparison
from runs.analysis.batch_results import BatchResults
from runs.analysis.results import RunFigures
from runs.models import FINISHED_STATUSES, Batch, StoredResults, Target
from runs.services import selectors
from runs.services.answers import held, relative, results

logger = logging.getLogger(__name__)

PAGE_TEMPLATE = "runs/_results_stored.html"
ROOT = Path(__file__).resolve().parents[3]
# What an answer is made from: a change to any of these makes the stored answers stale.
SOURCES = (
    "runs/analysis",
    "runs/json_text.py",
    "runs/columns.py",
    "runs/frozen.py",
    "runs/services/answers/stored_results.py",
    "runs/services/answers/results.py",
    "runs/services/selectors.py",
    "runs/services/answers/timeseries.py",
    "runs/web/templatetags",
    "templates/runs",
)
# What the API and the report read, what the page shows, and the figures of the batch's
# runs that the compare page reads (selectors.SideFigures).
PARTS = ("results", "html", "side")


@dataclass(frozen=True)
class Stored:
    """What a view serves, and the digest of it when it is stored (None: built for this
    request only)."""

    value: Any  # BatchResults, its JSON (batch_stored_json) or the page's HTML (batch_page)
    etag: str | None


def stored_key(baseline: str | int | None) -> str:
    """The view an answer is stored under: `baseline=1` (?baseline=1; what is no index is
    0, as results.baseline_index reads it)."""
    text = str(baseline if baseline is not None else "0")
    return f"baseline={int(text) if text.isdigit() else 0}"


def with_stored(
    batches: QuerySet[Batch], *, baseline: str | int | None, part: str
) -> QuerySet[Batch]:
    """The batches, each with its stored answer's `part` (one of PARTS) for the
    baseline asked for when one is stored and fresh: read in the same query as the batch
    (`cached_etag`, and `cached_<part>`, the part's text: None when there is no answer, or
    when this process holds the part already: held.py; read by _stored)."""
    if part not in PARTS:
        raise ValueError(f"not a part of an answer: {part}")
    fresh = Q(
        stored_results__key=stored_key(baseline),
        stored_results__etag__startswith=f"{stored_version()}-",
        stored_results__computed_at__gte=Coalesce(F("finished_at"), F("created_at")),
    )
    text = KeyTextTransform(part, "stored__content")
    in_memory = held.etags(part)
    return batches.annotate(
        stored=FilteredRelation("stored_results", condition=fresh),
        cached_etag=F("stored__etag"),
        **{f"cached_{part}": Case(When(stored__etag__in=in_memory, then=Value(None)),
                                  default=text, output_field=TextField())
                             if in_memory else text},
    )  # fmt: skip


def batch_stored(*, batch: Batch, baseline: str | int | None = None) -> Stored:
    """The batch's results (BatchResults) against the baseline asked for: as stored for a
    finished batch (stored now if they were not), built afresh for a live one."""
    if batch.status not in FINISHED_STATUSES:
        return Stored(results.batch_results(batch=_whole(batch), baseline=baseline), None)
    stored = batch_stored_json(batch=batch, baseline=baseline)
    return Stored(BatchResults.from_json(stored.value), stored.etag)


def batch_stored_json(*, batch: Batch, baseline: str | int | None = None) -> Stored:
    """The same as JSON (BatchResults.to_json), for the API: a stored answer is sent as it
    was read, without a round trip through BatchResults."""
    if batch.status not in FINISHED_STATUSES:
        found = results.batch_results(batch=_whole(batch), baseline=baseline)
        return Stored(found.to_json(), None)
    etag, stored = _stored(batch, baseline, "results")
    if etag is None:
        etag, built = _store(batch, baseline)
        stored = built.results
    return Stored(stored, etag)


def batch_page(
    *,
    batch: Batch,
    baseline: str | int | None = None,
    selected: list[int] | None = None,
    counter: str = "",
) -> Stored:
    """The results page below its header, as HTML: stored for a finished batch's default
    views (any baseline, no runs chosen, no counter), built for this request otherwise."""
    if batch.status in FINISHED_STATUSES and not selected and not counter:
        etag, html = _stored(batch, baseline, "html")
        if etag is None:
            etag, built = _store(batch, baseline)
            html = built.html
        return Stored(html, etag)
    batch = _whole(batch)
    read = results.batch_results_runs(batch=batch)
    page = results.batch_results_page(
        batch=batch, baseline=baseline, selected=selected or [], counter=counter, read=read
    )
    page["relative"] = relative.batch_relative(batch=batch, read=read)
    return Stored(render_to_string(PAGE_TEMPLATE, page), None)


def batch_side(*, batch: Batch) -> selectors.SideFigures | None:
    """A finished batch's run figures as its stored answer keeps them, for the compare page
    (read with the batch: with_stored(part="side")); None when there are none stored, for
    the caller to read its runs (the compare page stores nothing)."""
    if batch.status not in FINISHED_STATUSES:
        return None
    etag, side = _stored(batch, None, "side")
    return side if etag is not None else None


def batch_results_store(*, batch: Batch) -> None:
    """Where a batch ends: its answers replaced by the default view's, built now. A
    failure is logged: it costs the stored answer (built on the first request instead),
    never the batch's ending."""
    if batch.status not in FINISHED_STATUSES:
        return
    try:
        with transaction.atomic():
            StoredResults.objects.filter(batch=batch).delete()
            _store(batch, None)
    except Exception:
        logger.exception("batch %s: its answer could not be stored", batch.pk)


def batch_results_forget(*, batch_id: int) -> None:
    """What feeds a batch's answers changed (its runs edited): built again when asked."""
    StoredResults.objects.filter(batch_id=batch_id).delete()


def target_results_forget(*, target: Target) -> None:
    """The target's facts an answer reads (its cores and disks) changed: the answers of its
    batches are built again when asked."""
    StoredResults.objects.filter(batch__target=target).delete()


def shown_etag(cached_etag: str | None, batch: Batch, *facts: Any) -> str | None:
    """The ETag of a page or document that shows a stored answer with the batch's own
    facts around it (status, names, warnings) and the request's `facts` (who asks):
    None when the answer is not stored."""
    if cached_etag is None:
        return None
    shown = (
        cached_etag, batch.status, batch.label, batch.plan.name if batch.plan else "",
        batch.target.name if batch.target else "", batch.warnings, batch.error, *facts,
    )  # fmt: skip
    return hashlib.sha256(json.dumps(shown, default=str).encode()).hexdigest()


@cache
def stored_version() -> str:
    """A digest of the sources an answer is made from, read once per process."""
    digest = hashlib.sha256()
    for source in SOURCES:
        path = ROOT / source
        files = sorted(path.rglob("*")) if path.is_dir() else [path]
        for file in (f for f in files if f.suffix in (".py", ".html")):
            digest.update(str(file.relative_to(ROOT)).encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()[:16]


def _stored(batch: Batch, baseline: str | int | None, part: str) -> tuple[str | None, Any]:
    """(etag, part) of the stored answer, read with the batch (with_stored) or now; the
    part as _READ makes it, held by this process from then on (held.py)."""
    if not hasattr(batch, "cached_etag") or not hasattr(batch, f"cached_{part}"):
        found = with_stored(Batch.objects.filter(pk=batch.pk), baseline=baseline, part=part)
        row = found.values_list("cached_etag", f"cached_{part}").first()
        etag, text = row if row is not None else (None, None)
    else:
        etag, text = batch.cached_etag, getattr(batch, f"cached_{part}")
    if etag is None:
        return None, None
    value = held.value(etag, part) if text is None else held.MISSING
    if value is held.MISSING:
        # Read with the batch; or held when the batch was read, let go since: read now.
        # An etag is the digest of the answer's content: any row of it is the same.
        text = text if text is not None else _text_of(etag, part)
        value = _READ[part](text)
        held.keep(etag, part, value, len(text))
    return etag, value


def _text_of(etag: str, part: str) -> str:
    found = StoredResults.objects.filter(etag=etag).values_list(KeyTextTransform(part, "content"))
    return str(found[0][0])


def _side_read(text: str) -> selectors.SideFigures:
    side = json.loads(text)
    return [RunFigures.from_json(f) for f in side["figures"]], side["host_busy_pct"]


# Each part as the views use it, from its text as PostgreSQL sends it (content->>'part').
_READ: dict[str, Callable[[str], Any]] = {"results": json.loads, "html": str, "side": _side_read}


def _store(batch: Batch, baseline: str | int | None) -> tuple[str, _Built]:
    """Build the answer and store it under its baseline's index (an index beyond the
    series is the first's: stored as baseline=0, so odd ?baseline= add no rows)."""
    batch = _whole(batch)
    read = results.batch_results_runs(batch=batch)
    index = results.baseline_index(read.series, baseline)
    page = results.batch_results_page(batch=batch, baseline=index, read=read)
    page["relative"] = relative.batch_relative(batch=batch, read=read)
    results_text = _json_text(page["results"])
    side_text = _json_text(
        {
            "figures": [f.to_json() for f in read.figures],
            "host_busy_pct": comparison.host_busy_pct(r.host_summary for r in read.runs),
        }
    )
    html = render_to_string(PAGE_TEMPLATE, page)
    digest = hashlib.sha256()
    for text in (stored_version(), results_text, html, side_text):
        digest.update(text.encode() + b"\0")
    etag = f"{stored_version()}-{digest.hexdigest()[:47]}"  # made by this code (with_stored)
    # The content's JSON written from the parts' texts, and sent as text: the JSON field
    # would encode every value of it again (a 200-run answer is 0.9 MB).
    content = (
        f'{{"version": {json.dumps(stored_version())}, "results": {results_text}, '
        f'"html": {json.dumps(html)}, "side": {side_text}}}'
    )
    stored = StoredResults(batch=batch, key=stored_key(index), etag=etag,
                           content=Cast(Value(content), output_field=JSONField()))  # fmt: skip
    StoredResults.objects.bulk_create(
        [stored],
        update_conflicts=True,
        unique_fields=["batch", "key"],
        update_fields=["content", "etag", "computed_at"],
    )
    return etag, _Built(html, results_text)


def _whole(batch: Batch) -> Batch:
    """The batch with every field, to build an answer from: header_with_stored reads its
    header only."""
    if not batch.get_deferred_fields():
        return batch
    return selectors.batches_with_plan().get(pk=batch.pk)


@dataclass(frozen=True)
class _Built:
    """An answer just built: its page's HTML, its results' JSON (read when asked)."""

    html: str
    results_text: str

    @property
    def results(self) -> Any:
        return json.loads(self.results_text)


def _json_text(data: Any) -> str:
    """Its JSON text, of JSON types only, NaN and infinities (a ratio to nothing) null, as
    PostgreSQL takes them (runs/json_text.py)."""
    try:
        return json_text.dumps(data).decode()
    except json_text.EncodeError:  # what orjson refuses, the standard library's way
        text = json.dumps(data, cls=json_text.Encoder)
        return json.dumps(json.loads(text, parse_constant=lambda _: None))
