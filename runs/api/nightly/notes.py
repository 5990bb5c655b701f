"""Notes and tags on batches, and annotations on a plan's history, for scripts
(runs/services/notes.py): what the team wrote down beside the figures."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from runs.models import Annotation, Batch, Plan
from runs.services import notes as notes_service
from runs.services import permissions


class BatchNotesSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField(read_only=True)
    notes = serializers.CharField(
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        max_length=notes_service.MAX_NOTES_CHARS,
    )
    tags = serializers.ListField(
        child=serializers.RegexField(
            r"\S", max_length=notes_service.MAX_TAG_CHARS, trim_whitespace=False
        ),  # trimmed by the service: a tag has something besides spaces
        max_length=notes_service.MAX_TAGS,
        required=False,
        help_text="Short labels, kept once each in their order; [] removes them all.",
    )


class BatchNotes(APIView):
    """A batch's notes and tags: anyone reads them; who may cancel the batch writes them."""

    @extend_schema(operation_id="batches_notes_retrieve", responses={200: BatchNotesSerializer})
    def get(self, request: Request, pk: int) -> Response:
        return Response(BatchNotesSerializer(get_object_or_404(Batch, pk=pk)).data)

    @extend_schema(
        operation_id="batches_notes_update",
        request=BatchNotesSerializer,
        responses={200: BatchNotesSerializer},
    )
    def patch(self, request: Request, pk: int) -> Response:
        batch = get_object_or_404(Batch.objects.select_related("plan"), pk=pk)
        permissions.require_note(request.user, batch)
        given = BatchNotesSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        notes_service.batch_annotate(batch=batch, **given.validated_data)
        return Response(BatchNotesSerializer(batch).data)


class AnnotationSerializer(serializers.ModelSerializer[Annotation]):
    text = serializers.RegexField(
        r"\S",
        max_length=notes_service.MAX_TEXT_CHARS,
        trim_whitespace=False,
        help_text='What happened, e.g. "upgraded to 10.11.9".',
    )
    created_by: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )

    class Meta:
        model = Annotation
        fields = ["id", "plan", "at", "text", "created_by", "created_at"]
        read_only_fields = ["id", "plan", "created_by", "created_at"]


class PlanAnnotations(APIView):
    """Marks on a plan's history timeline, oldest first; adding one needs the right to
    change the plan."""

    @extend_schema(
        operation_id="plans_annotations_list", responses={200: AnnotationSerializer(many=True)}
    )
    def get(self, request: Request, pk: int) -> Response:
        plan = get_object_or_404(Plan, pk=pk)
        found = Annotation.objects.filter(plan=plan).select_related("created_by")
        return Response(AnnotationSerializer(found, many=True).data)

    @extend_schema(
        operation_id="plans_annotations_create",
        request=AnnotationSerializer,
        responses={201: AnnotationSerializer},
    )
    def post(self, request: Request, pk: int) -> Response:
        plan = get_object_or_404(Plan, pk=pk)
        permissions.require(request.user, "change", plan)
        given = AnnotationSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        made = notes_service.annotation_create(plan=plan, user=request.user, **given.validated_data)
        return Response(AnnotationSerializer(made).data, status=status.HTTP_201_CREATED)


class AnnotationDetail(APIView):
    @extend_schema(operation_id="annotations_destroy", responses={204: None})
    def delete(self, request: Request, pk: int) -> Response:
        annotation = get_object_or_404(Annotation.objects.select_related("plan"), pk=pk)
        permissions.require(request.user, "change", annotation.plan)
        notes_service.annotation_delete(annotation=annotation)
        return Response(status=status.HTTP_204_NO_CONTENT)
