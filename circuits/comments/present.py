"""Threads, comments and mentions as plain dicts: what the REST API answers and what the
live message carries (the same shape: circuits/api/comments.py declares it for OpenAPI)."""
from __future__ import annotations

from ..models import Comment, CommentThread, Mention


def _name(user) -> str | None:
    return user.username if user is not None else None


def _time(value):
    return value.isoformat().replace("+00:00", "Z") if value is not None else None


def comment_dict(comment: Comment) -> dict:
    return {"id": comment.pk, "author": comment.author.username, "body": comment.body,
            "mentions": sorted(m.user.username for m in comment.mentions.all()),
            "created_at": _time(comment.created_at), "edited_at": _time(comment.edited_at)}


def thread_dict(thread: CommentThread) -> dict:
    return {"id": thread.pk, "circuit": thread.circuit_id, "node": thread.node, "created_by": thread.created_by.username,
            "created_at": _time(thread.created_at), "resolved": thread.resolved_at is not None,
            "resolved_at": _time(thread.resolved_at), "resolved_by": _name(thread.resolved_by),
            "reopened_at": _time(thread.reopened_at), "reopened_by": _name(thread.reopened_by),
            "comments": [comment_dict(c) for c in thread.comments.all()]}


def threads_query():
    return (CommentThread.objects.select_related("created_by", "resolved_by", "reopened_by")
            .prefetch_related("comments__author", "comments__mentions__user"))


def mention_dict(mention: Mention) -> dict:
    comment = mention.comment
    thread = comment.thread
    return {"id": mention.pk, "read": mention.read_at is not None, "read_at": _time(mention.read_at),
            "circuit": thread.circuit_id, "circuit_name": thread.circuit.name, "thread": thread.pk, "node": thread.node,
            "resolved": thread.resolved_at is not None, "comment": comment.pk, "author": comment.author.username,
            "body": comment.body, "created_at": _time(comment.created_at)}
