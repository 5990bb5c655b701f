"""What the team knows of its nights, written down: notes and tags on a batch, and
annotations on a plan's history timeline (e.g. "upgraded to 10.11.9")."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User

from runs.errors import InvalidInput
from runs.models import Annotation, Batch, Plan

MAX_TAGS = 10
MAX_TAG_CHARS = 40
MAX_NOTES_CHARS = 10_000
MAX_TEXT_CHARS = 500  # Annotation.text


def batch_annotate(
    *, batch: Batch, notes: str | None = None, tags: Sequence[str] | None = None
) -> Batch:
    """Set a batch's notes and/or tags (None leaves one as it is). Tags are trimmed, kept
    once each in their order; an empty or too long one is refused, naming it."""
    fields = []
    if notes is not None:
        if len(notes) > MAX_NOTES_CHARS:
            raise InvalidInput("notes", f"at most {MAX_NOTES_CHARS:,} characters")
        batch.notes = notes.strip()
        fields.append("notes")
    if tags is not None:
        batch.tags = batch_tags(tags)
        fields.append("tags")
    if fields:
        batch.save(update_fields=fields)
    return batch


def batch_tags(tags: Sequence[str]) -> list[str]:
    kept: list[str] = []
    for tag in tags:
        tag = str(tag).strip()
        if not tag:
            raise InvalidInput("tags", "a tag cannot be empty")
        if len(tag) > MAX_TAG_CHARS:
            raise InvalidInput("tags", f"{tag[:20]}…: at most {MAX_TAG_CHARS} characters a tag")
        if tag not in kept:
            kept.append(tag)
    if len(kept) > MAX_TAGS:
        raise InvalidInput("tags", f"at most {MAX_TAGS} tags, not {len(kept)}")
    return kept


def annotation_create(
    *, plan: Plan, at: datetime, text: str, user: AbstractBaseUser | AnonymousUser | None
) -> Annotation:
    text = text.strip()
    if not text:
        raise InvalidInput("text", "say what happened, e.g. upgraded to 10.11.9")
    if len(text) > MAX_TEXT_CHARS:
        raise InvalidInput("text", f"at most {MAX_TEXT_CHARS} characters")
    return Annotation.objects.create(
        plan=plan, at=at, text=text, created_by=user if isinstance(user, User) else None
    )


def annotation_delete(*, annotation: Annotation) -> None:
    annotation.delete()
