from django.contrib import admin

from .models import Circuit, CircuitGrant, CircuitVersion, Tag


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
