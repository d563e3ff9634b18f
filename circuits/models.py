"""Circuits as versioned documents, their tags, and who may see and operate them.
Runs of a version live one layer up, in the runs app."""
from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q


class Visibility(models.TextChoices):
    PRIVATE = "private"
    UNLISTED = "unlisted"
    PUBLIC = "public"


def new_share_token() -> str:
    """An unguessable capability for reading an unlisted circuit (256 bits)."""
    return secrets.token_urlsafe(32)


class Tag(models.Model):
    """A label on circuits; lower-case, shared by everyone, filterable (`?tag=`)."""

    name = models.SlugField(max_length=50, unique=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Circuit(models.Model):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="circuits")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True, default="")
    visibility = models.CharField(max_length=16, choices=Visibility.choices, default=Visibility.PRIVATE)
    tags = models.ManyToManyField(Tag, blank=True, related_name="circuits")
    # The capability in share links (`/api/shared/<token>/`, `X-Share-Token`, `?share=`):
    # it opens an unlisted circuit to whoever holds it; revoking rotates it.
    share_token = models.CharField(max_length=64, unique=True, default=new_share_token, editable=False)
    forked_from = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="forks")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at", "-id"]

    def __str__(self) -> str:
        return self.name

    @property
    def latest_version(self) -> "CircuitVersion | None":
        prefetched = getattr(self, "_prefetched_objects_cache", {}).get("versions")
        if prefetched is not None:
            return max(prefetched, key=lambda v: v.number, default=None)
        return self.versions.order_by("-number").first()

    @classmethod
    def visible_to(cls, user, share_token: str | None = None):
        """Circuits a user may read: their own, those granted to them, anyone's public
        one, and the unlisted one whose share token they hold. Private circuits of
        others are never visible (no token opens them)."""
        readable = Q(visibility=Visibility.PUBLIC)
        if share_token:
            readable |= Q(visibility=Visibility.UNLISTED, share_token=share_token)
        if user.is_authenticated:
            readable |= Q(owner=user) | Q(pk__in=CircuitGrant.objects.filter(user=user).values("circuit_id"))
        return cls.objects.filter(readable)


class CircuitGrant(models.Model):
    """The owner lets another user see the circuit (even a private one); with
    `can_operate`, start/stop its runs and push to them; with `can_edit`, save new versions
    and co-edit its shared document. Managed through the share settings."""

    circuit = models.ForeignKey(Circuit, on_delete=models.CASCADE, related_name="grants")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="circuit_grants")
    can_operate = models.BooleanField(default=False)
    can_edit = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["circuit", "user__username"]
        constraints = [models.UniqueConstraint(fields=["circuit", "user"], name="unique_circuit_grant")]

    def __str__(self) -> str:
        return f"{self.user} on {self.circuit}" + (" (operate)" if self.can_operate else "") + (" (edit)" if self.can_edit else "")


class CircuitVersion(models.Model):
    """An immutable snapshot of a circuit's document."""

    circuit = models.ForeignKey(Circuit, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    document = models.JSONField()
    problems = models.JSONField(default=list)
    #: what the author said about this version when saving it ("" when nothing)
    message = models.CharField(max_length=500, blank=True, default="")
    #: who changed what since the previous version (circuits/authorship.py): one entry per
    #: item of the diff from it, {"change", "node"/"field"/"edge", "authors": [username, ...]}
    authors = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["circuit", "number"]
        constraints = [models.UniqueConstraint(fields=["circuit", "number"], name="unique_version_number")]

    def __str__(self) -> str:
        return f"{self.circuit.name} v{self.number}"


class SharedDocument(models.Model):
    """The circuit's shared editing document (docs/collaboration.md): a Yjs document that
    everyone with edit access edits together. `state` is the compacted Yjs update (the
    whole document up to `compacted_upto`); later edits are rows of `SharedDocumentUpdate`
    until the next compaction folds them in. Saving a version copies it into a
    CircuitVersion; runs never read it."""

    circuit = models.OneToOneField(Circuit, on_delete=models.CASCADE, related_name="shared_document")
    state = models.BinaryField()
    #: the id of the last update folded into `state` (0: none)
    compacted_upto = models.BigIntegerField(default=0)
    #: the version number the document was seeded from (None: an empty circuit)
    seeded_from = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"shared document of {self.circuit_id}"


class SharedDocumentUpdate(models.Model):
    """One Yjs update a writer sent, appended as it arrives (no read-modify-write, so
    concurrent writers never lose one); compaction deletes the rows it folded in."""

    document = models.ForeignKey(SharedDocument, on_delete=models.CASCADE, related_name="updates")
    update = models.BinaryField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]


class SharedDocumentEdit(models.Model):
    """The authorship ledger (circuits/authorship.py): `user` changed `item` (one item of
    circuits/diff.py's `changed_items`, keyed by `item_key`) in the shared document since
    the last version. One row per user and item however often they change it (dragging a
    node is one row per coordinate); compaction leaves these rows alone, saving a version
    reads them into the version's `authors` and deletes them."""

    document = models.ForeignKey(SharedDocument, on_delete=models.CASCADE, related_name="edits")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    item = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["document", "user", "item"], name="one_edit_per_user_and_item")]


class CommentThread(models.Model):
    """A discussion pinned to one node of a circuit (docs/collaboration.md, "Comments").
    It belongs to the circuit and the node's id, not to a version: it stays on the node as
    versions are saved, and forks do not copy it. A thread whose node is gone from the
    document is kept ("on a removed node") and shows on the node again if the id comes back."""

    circuit = models.ForeignKey(Circuit, on_delete=models.CASCADE, related_name="comment_threads")
    node = models.CharField(max_length=200)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="comment_threads")
    created_at = models.DateTimeField(auto_now_add=True)
    #: set while the thread is resolved (None: open)
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    #: the last time it was reopened, and by whom (None: never)
    reopened_at = models.DateTimeField(null=True, blank=True)
    reopened_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        ordering = ["circuit", "created_at", "id"]
        indexes = [models.Index(fields=["circuit", "node"], name="thread_circuit_node")]

    def __str__(self) -> str:
        return f"thread {self.pk} on {self.circuit_id}/{self.node}"


class Comment(models.Model):
    """One message of a thread; only its author edits or deletes it."""

    thread = models.ForeignKey(CommentThread, on_delete=models.CASCADE, related_name="comments")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="comments")
    body = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    #: the last edit (None: never edited)
    edited_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["thread", "created_at", "id"]


class Mention(models.Model):
    """`@username` in a comment, resolved to a user who may read the circuit; read or not."""

    comment = models.ForeignKey(Comment, on_delete=models.CASCADE, related_name="mentions")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="mentions")
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-comment__created_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["comment", "user"], name="unique_mention")]
        indexes = [models.Index(fields=["user", "read_at"], name="mention_user_read")]
