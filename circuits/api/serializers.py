from django.contrib.auth import get_user_model
from rest_framework import serializers

from ..diff import CHANGES
from ..models import Circuit, CircuitGrant, CircuitVersion, Visibility
from .. import access

MAX_TAGS = 20


class TagListField(serializers.ListField):
    """Tags as a list of lower-case slugs (letters, digits, '-' and '_')."""

    child = serializers.SlugField(max_length=50)

    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", MAX_TAGS)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        return list(dict.fromkeys(t.lower() for t in super().to_internal_value(data)))

    def to_representation(self, data):
        return sorted(t.name for t in data.all()) if hasattr(data, "all") else data


class ProblemSerializer(serializers.Serializer):
    """One problem; which keys are present depends on where it is."""

    message = serializers.CharField()
    node = serializers.CharField(required=False)
    port = serializers.CharField(required=False)
    param = serializers.CharField(required=False)
    row = serializers.IntegerField(required=False, help_text="0-based index of the pushed record / CSV data row")
    line = serializers.IntegerField(required=False, help_text="CSV line (1-based; the header is line 1)")
    field = serializers.CharField(required=False, help_text="column, request field or 'header'")
    position = serializers.IntegerField(required=False, help_text="character offset inside an expression")


class VersionSerializer(serializers.ModelSerializer):
    valid = serializers.SerializerMethodField(help_text="The document passed validation (no problems).")
    problems = ProblemSerializer(many=True, read_only=True,
                                 help_text="The validation result: every problem found in the document (empty when valid).")

    class Meta:
        model = CircuitVersion
        fields = ["number", "message", "document", "valid", "problems", "created_at"]

    def get_valid(self, version) -> bool:
        return not version.problems


class CircuitSerializer(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username", read_only=True)
    latest_version = VersionSerializer(read_only=True, allow_null=True)  # null while the circuit has no version
    document = serializers.JSONField(write_only=True, required=False, help_text="A circuit document; saving one adds a version.")
    visibility = serializers.ChoiceField(choices=Visibility.choices, default=Visibility.PRIVATE)
    tags = TagListField(required=False)
    forked_from = serializers.PrimaryKeyRelatedField(read_only=True, allow_null=True)
    can_edit = serializers.SerializerMethodField(help_text="The requester may save versions and co-edit (owner or a can_edit grant).")
    is_owner = serializers.SerializerMethodField(help_text="The requester owns the circuit (rename, delete, share settings).")
    can_operate = serializers.SerializerMethodField(help_text="The requester may start/stop runs and push.")
    can_comment = serializers.SerializerMethodField(
        help_text="The requester may write comments: the owner or a user it is shared with (any grant).")

    class Meta:
        model = Circuit
        fields = ["id", "name", "description", "owner", "visibility", "tags", "forked_from", "latest_version", "document",
                  "can_edit", "is_owner", "can_operate", "can_comment", "created_at", "updated_at"]
        read_only_fields = ["id", "owner", "latest_version", "forked_from", "created_at", "updated_at"]

    def _user(self):
        request = self.context.get("request")
        return request.user if request is not None else None

    def get_is_owner(self, circuit) -> bool:
        user = self._user()
        return bool(user) and access.is_owner(user, circuit)

    def _granted(self, circuit, right: str | None) -> bool:
        """The owner, or a grantee with `right` (can_edit, can_operate; None: any grant): one query per response."""
        user = self._user()
        if not user or not user.is_authenticated:
            return False
        if access.is_owner(user, circuit):
            return True
        key = f"_{right}_ids"
        if key not in self.context:
            rights = {right: True} if right else {}
            self.context[key] = set(CircuitGrant.objects.filter(user=user, **rights).values_list("circuit_id", flat=True))
        return circuit.pk in self.context[key]

    def get_can_edit(self, circuit) -> bool:
        return self._granted(circuit, "can_edit")

    def get_can_operate(self, circuit) -> bool:
        return self._granted(circuit, "can_operate")

    def get_can_comment(self, circuit) -> bool:
        return self._granted(circuit, None)  # circuits/comments/handler.py: is_participant


class NewVersionSerializer(serializers.Serializer):
    document = serializers.JSONField()
    message = serializers.CharField(max_length=500, required=False, allow_blank=True, default="",
                                    help_text="What changed, in the author's words (optional, at most 500 characters).")


class ErrorSerializer(serializers.Serializer):
    """The body of every 4xx answer."""

    detail = serializers.CharField()
    errors = ProblemSerializer(many=True)


class DocumentSerializer(serializers.Serializer):
    document = serializers.JSONField()


class ValidationResultSerializer(serializers.Serializer):
    valid = serializers.BooleanField()
    errors = ProblemSerializer(many=True)
    schemas = serializers.DictField(help_text="node id -> [{name, type, nullable}], the schema each node produces")


class ChangeAuthorsSerializer(serializers.Serializer):
    change = serializers.ChoiceField(choices=list(CHANGES), help_text="what changed: a node, one field of a node, a wire, one field of the document")
    node = serializers.CharField(required=False, help_text="the node's id (node_added, node_removed, node_changed)")
    field = serializers.CharField(required=False, help_text="the dotted path of the field (node_changed, document_changed), e.g. params.predicate")
    edge = serializers.CharField(required=False, help_text="the wire, `from.port->to.port` (edge_added, edge_removed)")
    authors = serializers.ListField(child=serializers.CharField(), help_text="who changed it, in the order they first did (usernames)")


class VersionDiffSerializer(serializers.Serializer):
    circuit = serializers.IntegerField()
    a = serializers.IntegerField(help_text="the version compared from")
    b = serializers.IntegerField(help_text="the version compared to")
    nodes = serializers.DictField(help_text="{added: [node], removed: [node], changed: [{id, fields, changes}]}")
    edges = serializers.DictField(help_text="{added: [edge], removed: [edge]}")
    document = serializers.DictField(help_text="the document's own fields that changed (e.g. metadata.source.text): {path: {from, to}}")
    authors = ChangeAuthorsSerializer(many=True, help_text="every item of the diff with who changed it (docs/collaboration.md)")


class ForkSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200, required=False, help_text="default: '<name> (fork)'")


class GrantSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    can_operate = serializers.BooleanField(default=False)
    can_edit = serializers.BooleanField(default=False, help_text="save new versions and co-edit the shared document")

    def to_representation(self, grant):
        if isinstance(grant, CircuitGrant):
            return {"username": grant.user.username, "can_operate": grant.can_operate, "can_edit": grant.can_edit}
        return super().to_representation(grant)


class ShareGrantSerializer(serializers.Serializer):
    """A grant as the share settings answer it (both fields always there)."""

    username = serializers.CharField()
    can_operate = serializers.BooleanField()
    can_edit = serializers.BooleanField()


class ShareSettingsSerializer(serializers.Serializer):
    """The share settings as answered: every field is always there."""

    visibility = serializers.ChoiceField(choices=Visibility.choices)
    grants = ShareGrantSerializer(many=True)
    share_token = serializers.CharField()
    share_url = serializers.CharField(help_text="the app link; works while the circuit is unlisted or public")
    share_api_url = serializers.CharField(help_text="GET it for the circuit detail")
    link_active = serializers.BooleanField(help_text="false while private: the token opens nothing then")


class ShareSettingsUpdateSerializer(serializers.Serializer):
    """PATCH /api/circuits/<id>/share/: `visibility` and/or `grants`."""

    visibility = serializers.ChoiceField(choices=Visibility.choices, required=False)
    grants = GrantSerializer(many=True, required=False, help_text="replaces the whole grant list")

    def validate_grants(self, grants):
        User = get_user_model()
        names = [g["username"] for g in grants]
        users = {u.username: u for u in User.objects.filter(username__in=names)}
        missing = [n for n in names if n not in users]
        if missing:
            raise serializers.ValidationError([f"no user {n!r}" for n in missing])
        if len(set(names)) != len(names):
            raise serializers.ValidationError("each user may appear once")
        return [{"user": users[g["username"]], "can_operate": g.get("can_operate", False), "can_edit": g.get("can_edit", False)}
                for g in grants]


# --- POST /api/plan/ (dbsp/plan.py Plan.describe builds it) ----------------------------------

class PlanPortRefSerializer(serializers.Serializer):
    node = serializers.CharField()
    port = serializers.CharField()


class PlanEdgeSerializer(serializers.Serializer):
    def get_fields(self):
        return {"from": PlanPortRefSerializer(), "to": PlanPortRefSerializer()}  # `from`: a Python keyword


class PlanPositionSerializer(serializers.Serializer):
    x = serializers.FloatField()
    y = serializers.FloatField()


class IncrementalFormSerializer(serializers.Serializer):
    form = serializers.ChoiceField(choices=["stream", "linear", "lifted", "delta", "fixedpoint", "boundary", "inner delay",
                                            "recomputed", "delta per iteration"],
                                   help_text="how the node runs in the plan (inside a fixed point: per iteration)")
    state = serializers.ListField(child=serializers.CharField(), help_text="what its incremental form keeps")


class PlanNodeSerializer(serializers.Serializer):
    """A node of the document, with the form it runs in; or one the plan inserted (an
    integral I or a delay z⁻¹ of a stateful node's input: `inserted`, `state_of`)."""

    id = serializers.CharField()
    kind = serializers.CharField()
    params = serializers.DictField()
    position = PlanPositionSerializer(required=False, help_text="as the document placed it (none: not placed)")
    label = serializers.CharField(required=False)
    incremental = IncrementalFormSerializer(required=False, help_text="a node of the document: its form")
    inserted = serializers.BooleanField(required=False, help_text="a node the plan inserted")
    state_of = serializers.CharField(required=False, help_text="an inserted node: the node whose state it is")
    # subcircuit: set below (a PlanSubcircuit: the plan of a fixed point's body, recursive)


class PlanSubcircuitSerializer(serializers.Serializer):
    nodes = PlanNodeSerializer(many=True)
    edges = PlanEdgeSerializer(many=True)


PlanNodeSerializer._declared_fields["subcircuit"] = PlanSubcircuitSerializer(required=False, help_text="a fixed point's body")


class PlanSerializer(PlanSubcircuitSerializer):
    """The compiled plan of a circuit document, as a circuit document."""

    format = serializers.CharField()
    version = serializers.IntegerField()
    mode = serializers.ChoiceField(choices=["literal", "incremental"],
                                   help_text="literal: a circuit with z⁻¹, I or D runs as drawn")
