from django.contrib import admin

from .models import Circuit, CircuitGrant, CircuitVersion, Comment, CommentThread, Tag


class VersionInline(admin.TabularInline):
    model = CircuitVersion
    extra = 0
    readonly_fields = ["number", "document", "problems", "created_at"]
    can_delete = False


class GrantInline(admin.TabularInline):
    model = CircuitGrant
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Circuit)
class CircuitAdmin(admin.ModelAdmin):
    list_display = ["id", "name", "owner", "visibility", "forked_from", "updated_at"]
    list_filter = ["visibility", "tags"]
    search_fields = ["name", "description", "owner__username"]
    readonly_fields = ["share_token", "created_at", "updated_at"]
    raw_id_fields = ["forked_from"]
    filter_horizontal = ["tags"]
    inlines = [VersionInline, GrantInline]


@admin.register(Tag)
class TagAdmin(admin.ModelAdmin):
    search_fields = ["name"]


class CommentInline(admin.TabularInline):
    model = Comment
    extra = 0
    raw_id_fields = ["author"]
    readonly_fields = ["created_at", "edited_at"]


@admin.register(CommentThread)
class CommentThreadAdmin(admin.ModelAdmin):
    """Comment threads pinned to nodes (moderation: an admin may delete a thread or a comment)."""

    list_display = ["id", "circuit", "node", "created_by", "created_at", "resolved_at"]
    list_filter = ["resolved_at"]
    search_fields = ["circuit__name", "node", "comments__body"]
    raw_id_fields = ["circuit", "created_by", "resolved_by", "reopened_by"]
    inlines = [CommentInline]
