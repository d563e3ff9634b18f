"""Request and answer bodies of the comment endpoints (circuits/api/comments.py). Answers
are made by circuits/comments/present.py; these declare their shape for OpenAPI."""
from rest_framework import serializers

from ..comments.handler import MAX_BODY_CHARS, MAX_NODE_CHARS


class TextField(serializers.CharField):
    """A string, and only a string (DRF's CharField would take 5 or true as "5", "True")."""

    default_error_messages = {"invalid": "Must be a string (got {kind})."}

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid", kind=type(data).__name__ if data is not None else "null")
        return super().to_internal_value(data)


class NewThreadSerializer(serializers.Serializer):
    node = TextField(max_length=MAX_NODE_CHARS, help_text="The id of a node of the circuit (its shared document or latest version).")
    body = TextField(max_length=MAX_BODY_CHARS, help_text="The first comment; `@username` mentions a user who can read the circuit.")


class CommentBodySerializer(serializers.Serializer):
    body = TextField(max_length=MAX_BODY_CHARS, help_text="`@username` mentions a user who can read the circuit.")


class CommentSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    author = serializers.CharField()
    body = serializers.CharField()
    mentions = serializers.ListField(child=serializers.CharField(), help_text="Usernames this comment mentions (not its author).")
    created_at = serializers.DateTimeField()
    edited_at = serializers.DateTimeField(allow_null=True)


class ThreadSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    circuit = serializers.IntegerField()
    node = serializers.CharField(help_text="The node's id; the node may be gone from the document (the thread is kept).")
    created_by = serializers.CharField()
    created_at = serializers.DateTimeField()
    resolved = serializers.BooleanField()
    resolved_at = serializers.DateTimeField(allow_null=True)
    resolved_by = serializers.CharField(allow_null=True)
    reopened_at = serializers.DateTimeField(allow_null=True)
    reopened_by = serializers.CharField(allow_null=True)
    comments = CommentSerializer(many=True)


class MentionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    read = serializers.BooleanField()
    read_at = serializers.DateTimeField(allow_null=True)
    circuit = serializers.IntegerField()
    circuit_name = serializers.CharField()
    thread = serializers.IntegerField()
    node = serializers.CharField()
    resolved = serializers.BooleanField()
    comment = serializers.IntegerField()
    author = serializers.CharField()
    body = serializers.CharField()
    created_at = serializers.DateTimeField()


class MentionListSerializer(serializers.Serializer):
    unread = serializers.IntegerField(help_text="How many mentions of the requester are unread (whatever `state` lists).")
    results = MentionSerializer(many=True, help_text="Newest first, at most 200.")


MAX_ID = 2**63 - 1


class MarkReadSerializer(serializers.Serializer):
    # bounded like the ids they name (a 64-bit integer): a larger number was a 500 (the database's overflow)
    ids = serializers.ListField(child=serializers.IntegerField(min_value=1, max_value=MAX_ID), required=False, max_length=500)
    all = serializers.BooleanField(required=False, default=False, help_text="Mark every mention of the requester read.")

    def validate(self, data):
        if not data.get("all") and not data.get("ids"):
            raise serializers.ValidationError({"ids": ["Give the mention ids to mark read, or all: true."]})
        return data
