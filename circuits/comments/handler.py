"""Every change to comment threads, comments and mentions (views parse and look the
circuit up; this decides who may do what, validates and writes, then tells the live layer).

Who may do what (docs/collaboration.md, "Comments"):
- read threads: whoever may read the circuit (circuits/access.py), share-link holders too;
- write (start a thread, reply): a signed-in *participant*: the owner or a user the owner
  granted access to (read, operate or edit). Like a Figma viewer, a read-only grantee
  comments. Someone who reads a public circuit, or holds an unlisted circuit's link, reads
  the comments but does not write them: the owner chooses who talks in their circuit, and
  a public circuit is not an open forum (nor a way to mention strangers);
- edit or delete a comment: its author only (while still a participant);
- resolve or reopen a thread: a writer (circuits.access.can_edit) or the thread's author.
"""
from __future__ import annotations

from django.db import transaction
from django.utils import timezone
from rest_framework.exceptions import PermissionDenied

from .. import access
from ..models import Circuit, CircuitGrant, Comment, CommentThread, Mention
from ..services import NUL, ServiceError
from . import live, mentions
from .nodes import node_ids
from .present import mention_dict, thread_dict, threads_query

MAX_BODY_CHARS = 5000
MAX_NODE_CHARS = 200
THREAD_STATES = ("open", "resolved", "all")
MENTION_STATES = ("unread", "read", "all")


def is_participant(user, circuit: Circuit) -> bool:
    if not user.is_authenticated:
        return False
    return access.is_owner(user, circuit) or CircuitGrant.objects.filter(circuit=circuit, user=user).exists()


def require_participant(user, circuit: Circuit) -> None:
    if not is_participant(user, circuit):
        raise PermissionDenied("Only the circuit's owner and the users it is shared with (a grant) may comment on it.")


def clean_body(body) -> str:
    if not isinstance(body, str):
        raise ServiceError("The comment's body must be text.", 400, [{"field": "body", "message": "must be a string"}])
    body = body.strip()
    if not body:
        raise ServiceError("The comment is empty.", 400, [{"field": "body", "message": "may not be blank"}])
    if len(body) > MAX_BODY_CHARS:
        raise ServiceError(f"The comment has {len(body)} characters; at most {MAX_BODY_CHARS}.", 400,
                           [{"field": "body", "message": f"more than {MAX_BODY_CHARS} characters"}])
    if NUL in body:
        raise ServiceError("The comment contains a NUL character (\\u0000), which cannot be stored.", 400,
                           [{"field": "body", "message": "contains a NUL character (\\u0000)"}])
    return body


def _fresh(thread_id: int) -> dict:
    return thread_dict(threads_query().get(pk=thread_id))


# ------------------------------------------------------------------ reading

def threads(circuit: Circuit, state: str = "all", node: str | None = None) -> list[dict]:
    if state not in THREAD_STATES:
        raise ServiceError(f"Unknown state {state!r}: one of {', '.join(THREAD_STATES)}.", 400,
                           [{"field": "state", "message": f"one of {', '.join(THREAD_STATES)}"}])
    query = threads_query().filter(circuit=circuit)
    if state != "all":
        query = query.filter(resolved_at__isnull=(state == "open"))
    if node is not None:
        query = query.filter(node=node)
    return [thread_dict(t) for t in query]


def thread_of(circuit: Circuit, thread_id: int) -> CommentThread:
    thread = threads_query().filter(circuit=circuit, pk=thread_id).first()
    if thread is None:
        raise ServiceError(f"Circuit {circuit.pk} has no comment thread {thread_id}.", 404,
                           [{"field": "thread", "message": f"no thread {thread_id}"}])
    return thread


def comment_of(thread: CommentThread, comment_id: int) -> Comment:
    comment = Comment.objects.filter(thread=thread, pk=comment_id).select_related("author").first()
    if comment is None:
        raise ServiceError(f"Thread {thread.pk} has no comment {comment_id}.", 404,
                           [{"field": "comment", "message": f"no comment {comment_id}"}])
    return comment


# ------------------------------------------------------------------ writing

def _mention(comment: Comment, users, author) -> list[str]:
    """Record the mentions of `users` (the author mentioning themselves is not one); their names."""
    named = [u for u in users if u.pk != author.pk]
    Mention.objects.bulk_create([Mention(comment=comment, user=u) for u in named])
    return [u.username for u in named]


@transaction.atomic
def create_thread(circuit: Circuit, user, node, body) -> dict:
    require_participant(user, circuit)
    body = clean_body(body)
    if not isinstance(node, str) or not node or len(node) > MAX_NODE_CHARS or NUL in node:
        raise ServiceError("`node` must be a node id (text, at most 200 characters).", 400,
                           [{"field": "node", "message": "must be a node id"}])
    if node not in node_ids(circuit):
        raise ServiceError(f"The circuit has no node {node!r} (in its shared document or its latest version).", 400,
                           [{"field": "node", "node": node, "message": f"no node {node!r} in this circuit"}])
    users = mentions.resolve(circuit, body)
    thread = CommentThread.objects.create(circuit=circuit, node=node, created_by=user)
    comment = Comment.objects.create(thread=thread, author=user, body=body)
    mentioned = _mention(comment, users, user)
    shown = _fresh(thread.pk)
    live.thread_changed(shown, mentioned)
    return shown


def _locked(thread: CommentThread) -> None:
    """Hold the thread's row until the commit (a reply and the deletion of its thread's last
    comment do not cross); a thread deleted meanwhile is not found."""
    if not CommentThread.objects.select_for_update().filter(pk=thread.pk).exists():
        raise ServiceError(f"Comment thread {thread.pk} was deleted.", 404, [{"field": "thread", "message": f"no thread {thread.pk}"}])


@transaction.atomic
def reply(thread: CommentThread, user, body) -> dict:
    require_participant(user, thread.circuit)
    body = clean_body(body)
    users = mentions.resolve(thread.circuit, body)
    _locked(thread)
    comment = Comment.objects.create(thread=thread, author=user, body=body)
    mentioned = _mention(comment, users, user)
    shown = _fresh(thread.pk)
    live.thread_changed(shown, mentioned)
    return shown


def _require_author(user, comment: Comment) -> None:
    require_participant(user, comment.thread.circuit)
    if comment.author_id != user.pk:
        raise PermissionDenied("Only the comment's author may change or delete it.")


@transaction.atomic
def edit_comment(comment: Comment, user, body) -> dict:
    _require_author(user, comment)
    body = clean_body(body)
    users = mentions.resolve(comment.thread.circuit, body)
    comment.body = body
    comment.edited_at = timezone.now()
    comment.save(update_fields=["body", "edited_at"])
    wanted = {u.pk: u for u in users if u.pk != user.pk}
    had = set(comment.mentions.values_list("user_id", flat=True))
    comment.mentions.exclude(user_id__in=wanted).delete()
    new = [u for pk, u in wanted.items() if pk not in had]
    mentioned = _mention(comment, new, user)
    shown = _fresh(comment.thread_id)
    live.thread_changed(shown, mentioned)
    return shown


@transaction.atomic
def delete_comment(comment: Comment, user) -> dict | None:
    """Delete one's comment; the thread goes with its last comment (None then)."""
    _require_author(user, comment)
    thread = comment.thread
    _locked(thread)
    comment.delete()
    if not thread.comments.exists():
        circuit_id, thread_id = thread.circuit_id, thread.pk
        thread.delete()
        live.thread_deleted(circuit_id, thread_id)
        return None
    shown = _fresh(thread.pk)
    live.thread_changed(shown)
    return shown


def _require_resolver(user, thread: CommentThread) -> None:
    if not user.is_authenticated:
        raise PermissionDenied("Sign in to resolve a thread.")
    if not (access.can_edit(user, thread.circuit) or (thread.created_by_id == user.pk and is_participant(user, thread.circuit))):
        raise PermissionDenied("Only a user who may edit the circuit, or the thread's author, may resolve or reopen it.")


@transaction.atomic
def resolve(thread: CommentThread, user) -> dict:
    """Resolve an open thread (a resolved one stays as it was: resolving twice is no change)."""
    _require_resolver(user, thread)
    thread = CommentThread.objects.select_for_update().get(pk=thread.pk)
    if thread.resolved_at is None:
        thread.resolved_at, thread.resolved_by = timezone.now(), user
        thread.save(update_fields=["resolved_at", "resolved_by"])
        live.thread_changed(_fresh(thread.pk))
    return _fresh(thread.pk)


@transaction.atomic
def reopen(thread: CommentThread, user) -> dict:
    _require_resolver(user, thread)
    thread = CommentThread.objects.select_for_update().get(pk=thread.pk)
    if thread.resolved_at is not None:
        thread.resolved_at, thread.resolved_by = None, None
        thread.reopened_at, thread.reopened_by = timezone.now(), user
        thread.save(update_fields=["resolved_at", "resolved_by", "reopened_at", "reopened_by"])
        live.thread_changed(_fresh(thread.pk))
    return _fresh(thread.pk)


# ------------------------------------------------------------------ a user's mentions

def _mentions_of(user):
    readable = Circuit.visible_to(user).values("pk")
    return (Mention.objects.filter(user=user, comment__thread__circuit__in=readable)
            .select_related("comment__author", "comment__thread__circuit"))


def mentions_of(user, state: str = "all") -> dict:
    """The comments that mention `user` on circuits they can still read, newest first."""
    if state not in MENTION_STATES:
        raise ServiceError(f"Unknown state {state!r}: one of {', '.join(MENTION_STATES)}.", 400,
                           [{"field": "state", "message": f"one of {', '.join(MENTION_STATES)}"}])
    query = _mentions_of(user)
    unread = query.filter(read_at__isnull=True).count()
    if state != "all":
        query = query.filter(read_at__isnull=(state == "unread"))
    return {"unread": unread, "results": [mention_dict(m) for m in query[:200]]}


@transaction.atomic
def mark_read(user, ids: list[int] | None, everything: bool) -> dict:
    """Mark the user's mentions `ids` (or all of them) read; ids that are not theirs: 400 naming them."""
    query = _mentions_of(user).filter(read_at__isnull=True)
    if not everything:
        ids = list(dict.fromkeys(ids or []))
        mine = set(_mentions_of(user).filter(pk__in=ids).values_list("pk", flat=True))
        missing = [i for i in ids if i not in mine]
        if missing:
            raise ServiceError(f"No mention of yours has id {', '.join(map(str, missing))}.", 400,
                               [{"field": "ids", "message": f"no mention of yours: {i}"} for i in missing])
        query = query.filter(pk__in=ids)
    Mention.objects.filter(pk__in=list(query.values_list("pk", flat=True))).update(read_at=timezone.now())
    return mentions_of(user)
