"""A connector as declared (write) and as shown (read): secrets are write-only, shown
only by their names."""
from __future__ import annotations

import re

from rest_framework import serializers

from dbsp.connector_specs import ON_ERROR

from ..kinds import NAME_WORDS
from ..models import Connector, DeadLetter
from ..registry import kinds
from ..secrets import seal
from ..status import lag_of, rate_of, shown_state

NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")


class ConnectorSerializer(serializers.ModelSerializer):
    kind = serializers.ChoiceField(choices=sorted(kinds()), help_text="see docs/connectors.md")
    secrets = serializers.DictField(child=serializers.CharField(), write_only=True, required=False,
                                    help_text="client options that are secrets (e.g. sasl.password): stored, never returned")
    secrets_env = serializers.DictField(child=serializers.CharField(), required=False,
                                        help_text="secret option -> the environment variable holding it, read on the worker when the client opens")
    secret_keys = serializers.SerializerMethodField(help_text="the names of the stored secrets")
    state = serializers.SerializerMethodField(help_text="running, paused (by itself or with its run), retrying or failed")
    lag = serializers.SerializerMethodField(
        help_text="how far behind it is, in lag_unit (null: not knowable): a source's records (files, bytes) "
                  "not read yet; a sink's ticks committed but not written yet")
    lag_unit = serializers.SerializerMethodField(help_text="records, files, bytes or ticks ('' when lag is null)")
    rows_per_second = serializers.SerializerMethodField(help_text="records in (a source) or out (a sink) a second, over the last 30 s")

    class Meta:
        model = Connector
        fields = ["name", "kind", "node", "config", "secrets", "secrets_env", "secret_keys", "state", "position",
                  "records_in", "records_out", "last_tick", "lag", "lag_unit", "rows_per_second", "dead_letters",
                  "errors", "last_error", "error_at", "created_at"]
        read_only_fields = ["position", "records_in", "records_out", "last_tick", "dead_letters", "errors", "last_error",
                            "error_at", "created_at"]

    def get_secret_keys(self, obj) -> list[str]:
        return sorted(obj.secrets or {})

    def get_state(self, obj) -> str:
        return shown_state(obj.state, obj.run.status)

    def get_lag(self, obj) -> int | None:
        return lag_of(obj, obj.run.current_tick)[0]

    def get_lag_unit(self, obj) -> str:
        return lag_of(obj, obj.run.current_tick)[1]

    def get_rows_per_second(self, obj) -> float:
        return round(rate_of(obj.rate_samples, obj.records_in if obj.is_source else obj.records_out, obj.created_at), 3)

    def create(self, validated_data):
        validated_data["secrets"] = seal(validated_data.get("secrets"))  # encrypted at rest (connectors/secrets.py)
        return super().create(validated_data)

    def validate_name(self, value):
        if not NAME.match(value):
            raise serializers.ValidationError("a letter, then letters, digits, _ or - (at most 64)")
        return value

    def validate_secrets_env(self, value):
        for option, variable in value.items():
            if not ENV_NAME.match(variable):
                raise serializers.ValidationError(f"{option}: {variable!r} is not an environment variable name (letters, digits, _)")
        return value

    def validate(self, attrs):
        run, kind, node = self.context["run"], kinds()[attrs["kind"]], attrs["node"]
        plan = self.context["plan"]
        if kind.source and node not in plan.inputs:
            raise serializers.ValidationError({"node": f"a source feeds an input table; inputs: {', '.join(plan.inputs) or 'none'}"})
        if not kind.source and node not in plan.views:
            raise serializers.ValidationError({"node": f"a sink receives an output view; views: {', '.join(plan.views) or 'none'}"})
        config = attrs.get("config") or {}
        if not isinstance(config, dict):
            raise serializers.ValidationError({"config": "an object of options"})
        unknown = sorted(set(config) - kind.options)
        if unknown:
            raise serializers.ValidationError({"config": f"unknown option {unknown[0]!r} for {kind.name} (options: {', '.join(sorted(kind.options))})"})
        for key in kind.required:
            if not isinstance(config.get(key), str) or not config[key]:
                raise serializers.ValidationError({"config": f"{key} is required (a string)"})
        secretish = [k for k in (config.get("options") or {}) if any(w in k.lower() for w in NAME_WORDS)]
        if secretish:
            raise serializers.ValidationError({"config": f"option {secretish[0]!r} is a secret: put it in secrets (never returned)"})
        if "options" in config and not all(isinstance(v, (str, int, float, bool)) for v in (config["options"] or {}).values()):
            raise serializers.ValidationError({"config": "options: a flat object of client settings"})
        on_error = config.get("on_error")
        if on_error is not None and on_error not in ON_ERROR:
            raise serializers.ValidationError({"config": f"on_error must be one of {', '.join(ON_ERROR)}; got {on_error!r}"})
        fmt = config.get("format")
        if fmt is not None and fmt not in kind.formats:
            raise serializers.ValidationError({"config": f"format must be one of {', '.join(kind.formats)}; got {fmt!r}"})
        columns = config.get("columns")
        schema = plan.inputs[node] if kind.source else None
        if columns is not None and not isinstance(columns, dict):  # a dict (a mapping) is the kind's to check
            names = schema.names
            if not isinstance(columns, list) or any(c not in names for c in columns):
                raise serializers.ValidationError({"config": f"columns: a list of the input's columns ({', '.join(names)})"})
        problem = kind.check(config, schema) if kind.check else None
        if problem:
            raise serializers.ValidationError({"config": problem})
        if Connector.objects.filter(run=run, name=attrs["name"]).exists():
            raise serializers.ValidationError({"name": f"run {run.pk} already has a connector {attrs['name']!r}"})
        return attrs


class DeadLetterSerializer(serializers.ModelSerializer):
    class Meta:
        model = DeadLetter
        fields = ["id", "position", "column", "message", "payload", "created_at"]
