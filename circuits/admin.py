from django.contrib import admin

from .models import Circuit, CircuitVersion, Push, Run, TickOutput


class VersionInline(admin.TabularInline):
    model = CircuitVersion
    extra = 0
    readonly_fields = ["number", "document", "problems", "created_at"]


@admin.register(Circuit)
class CircuitAdmin(admin.ModelAdmin):
    list_display = ["id", "name", "owner", "visibility", "updated_at"]
    list_filter = ["visibility"]
    search_fields = ["name", "description", "owner__username"]
    inlines = [VersionInline]


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ["id", "circuit", "version", "status", "current_tick", "last_sequence", "worker", "updated_at"]
    list_filter = ["status"]


@admin.register(Push)
class PushAdmin(admin.ModelAdmin):
    list_display = ["id", "run", "sequence", "input", "row_count", "idempotency_key", "received_at", "applied_tick"]
    list_filter = ["input"]
    search_fields = ["idempotency_key"]


@admin.register(TickOutput)
class TickOutputAdmin(admin.ModelAdmin):
    list_display = ["id", "run", "tick", "ms", "created_at"]
