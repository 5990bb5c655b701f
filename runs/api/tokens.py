"""API tokens: a user's list, create (the token shown once), revoke."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.authentication import BasicAuthentication, SessionAuthentication
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from runs.api.auth import TokenAuthentication
from runs.api.common import JSONBody, request_user
from runs.services import tokens


class TokenSerializer(JSONBody[Any]):
    token_key = serializers.CharField(read_only=True, help_text="The token's first characters.")
    name = serializers.CharField(max_length=100, default="", allow_blank=True)
    created = serializers.DateTimeField(read_only=True)
    expiry = serializers.DateTimeField(read_only=True, allow_null=True)
    expires_in_days = serializers.IntegerField(
        write_only=True,
        required=False,
        allow_null=True,
        min_value=1,
        max_value=3650,
        help_text="Leave out for a token that lives until revoked.",
    )


class NewTokenSerializer(TokenSerializer):
    token = serializers.CharField(
        read_only=True, help_text="The token itself: shown this once, keep it safe."
    )


class TokenList(generics.ListCreateAPIView[Any]):
    """Your API tokens. A new token is shown once, in the response to its creation. Here
    alone a user name and password (HTTP Basic) are taken too, as knox's login view takes
    them: a machine without a browser gets its first token so."""

    serializer_class = TokenSerializer
    authentication_classes = [TokenAuthentication, SessionAuthentication, BasicAuthentication]

    def get_queryset(self) -> QuerySet[Any]:
        return tokens.tokens_of(request_user(self.request))

    @extend_schema(request=TokenSerializer, responses={201: NewTokenSerializer})
    def post(self, request: Request) -> Response:
        given = TokenSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        days = given.validated_data.get("expires_in_days")
        token, text = tokens.token_create(
            user=request_user(request),
            name=given.validated_data["name"],
            expires_in=None if days is None else timedelta(days=days),
        )
        created = {
            "token_key": token.token_key,
            "name": getattr(token, "name", given.validated_data["name"]),
            "created": token.created,
            "expiry": token.expiry,
            "token": text,
        }
        return Response(NewTokenSerializer(created).data, status=status.HTTP_201_CREATED)


class TokenRevoke(APIView):
    @extend_schema(request=None, responses={204: None})
    def delete(self, request: Request, token_key: str) -> Response:
        if not tokens.token_revoke(user=request_user(request), token_key=token_key):
            return Response(
                {"field": "token_key", "message": "you have no such token"},
                status=status.HTTP_404_NOT_FOUND,
            )
        return Response(status=status.HTTP_204_NO_CONTENT)
