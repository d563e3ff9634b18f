from django.contrib import admin

from .models import Circuit, CircuitGrant, CircuitVersion, Push, Run, Tag, TickOutput


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


class PushInline(admin.TabularInline):
    model = Push
    extra = 0
    fields = ["sequence", "input", "row_count", "idempotency_key", "received_at", "applied_tick"]
    readonly_fields = fields
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ["id", "circuit", "version", "status", "current_tick", "last_sequence", "worker", "updated_at"]
    list_filter = ["status"]
    search_fields = ["circuit__name", "worker"]
    raw_id_fields = ["circuit", "version", "created_by"]
    inlines = [PushInline]


@admin.register(Push)
class PushAdmin(admin.ModelAdmin):
    """The input log. Entries are evidence of what was acknowledged: read-only here."""

    list_display = ["id", "run", "sequence", "input", "row_count", "idempotency_key", "received_at", "applied_tick"]
    list_filter = ["input"]
    search_fields = ["idempotency_key"]
    raw_id_fields = ["run"]

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in Push._meta.fields]

    def has_add_permission(self, request):
        return False


@admin.register(TickOutput)
class TickOutputAdmin(admin.ModelAdmin):
    list_display = ["id", "run", "tick", "ms", "created_at"]
    raw_id_fields = ["run"]
