from django.contrib import admin

from .models import Push, Run, TickOutput


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

    exclude = ["change", "records_json"]  # shown as `records`, whichever form it is stored in

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in Push._meta.fields if f.name not in self.exclude] + ["shown_records"]

    @admin.display(description="records (first 100)")
    def shown_records(self, obj):
        return (obj.records or [])[:100]

    def has_add_permission(self, request):
        return False


@admin.register(TickOutput)
class TickOutputAdmin(admin.ModelAdmin):
    list_display = ["id", "run", "tick", "ms", "created_at"]
    raw_id_fields = ["run"]
