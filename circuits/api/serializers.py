from rest_framework import serializers

from ..models import Circuit, CircuitVersion, Push, Run, Visibility
from .. import services


class VersionSerializer(serializers.ModelSerializer):
    class Meta:
        model = CircuitVersion
        fields = ["number", "document", "created_at"]


class CircuitSerializer(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username", read_only=True)
    latest_version = VersionSerializer(read_only=True)
    document = serializers.JSONField(write_only=True, required=False)
    visibility = serializers.ChoiceField(choices=Visibility.choices, default=Visibility.PRIVATE)

    class Meta:
        model = Circuit
        fields = ["id", "name", "description", "owner", "visibility", "latest_version", "document", "created_at", "updated_at"]
        read_only_fields = ["id", "owner", "latest_version", "created_at", "updated_at"]


class NewVersionSerializer(serializers.Serializer):
    document = serializers.JSONField()


class RunSerializer(serializers.ModelSerializer):
    version = serializers.IntegerField(source="version.number", read_only=True)
    inputs = serializers.SerializerMethodField()
    views = serializers.SerializerMethodField()
    lag = serializers.SerializerMethodField()

    class Meta:
        model = Run
        fields = ["id", "circuit", "version", "status", "current_tick", "last_sequence", "lag", "error", "inputs", "views", "created_at"]
        read_only_fields = fields

    def _interface(self, run):
        cache = self.context.setdefault("_interfaces", {})
        if run.version_id not in cache:
            cache[run.version_id] = services.run_interface(run)
        return cache[run.version_id]

    def get_inputs(self, run):
        return self._interface(run)["inputs"]

    def get_views(self, run):
        return self._interface(run)["views"]

    def get_lag(self, run) -> int:
        """Accepted pushes not yet applied."""
        return run.pushes.filter(applied_tick__isnull=True).count()


class PushSerializer(serializers.ModelSerializer):
    token = serializers.CharField(read_only=True)

    class Meta:
        model = Push
        fields = ["token", "sequence", "input", "row_count", "received_at", "applied_tick"]
