from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from .. import dispatch
from ..interface import run_interface
from ..lag import lag_of
from ..listing import error_preview
from ..models import Push, Run, VerificationStatus
from ..profile import AGGREGATE, METRICS, PATHS


class RunSerializer(serializers.ModelSerializer):
    version = serializers.IntegerField(source="version.number", read_only=True)
    inputs = serializers.SerializerMethodField()
    views = serializers.SerializerMethodField()
    lag = serializers.SerializerMethodField()
    worker = serializers.SerializerMethodField(
        help_text="The worker that owns the run now ('<node name>:<pid>', the holder of its live lease); empty when "
                  "none does (not taken yet, stopped, failed, or its worker died and none has taken it over yet).")

    class Meta:
        model = Run
        fields = ["id", "circuit", "version", "status", "worker", "current_tick", "last_sequence", "lag", "error", "inputs", "views",
                  "created_at"]
        read_only_fields = fields

    def _interface(self, run):
        cache = self.context.setdefault("_interfaces", {})
        if run.version_id not in cache:
            cache[run.version_id] = run_interface(run)
        return cache[run.version_id]

    def get_inputs(self, run) -> list[dict]:
        return self._interface(run)["inputs"]

    def get_views(self, run) -> list[str]:
        return self._interface(run)["views"]

    def get_worker(self, run) -> str:
        return dispatch.worker_of(run.pk)

    def get_lag(self, run) -> dict:
        """Accepted pushes (and their rows) not yet applied, and the ticks they need."""
        return lag_of(run.pk)


class PushSerializer(serializers.ModelSerializer):
    token = serializers.CharField(read_only=True)

    class Meta:
        model = Push
        fields = ["token", "sequence", "input", "row_count", "received_at", "applied_tick"]


class RunStatsSerializer(serializers.Serializer):
    tick = serializers.IntegerField()
    ms = serializers.FloatField()
    nodes = serializers.ListField(child=serializers.DictField(), help_text="[{node, frontier, rows_in, rows_out, state_rows, ms}]")


class PushResultSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="completion token 'run:sequence'")
    sequence = serializers.IntegerField()
    duplicate = serializers.BooleanField(help_text="true when the Idempotency-Key was seen before")


class CompletionSerializer(serializers.Serializer):
    token = serializers.CharField()
    status = serializers.ChoiceField(choices=["pending", "complete", "failed"],
                                     help_text="failed: the run failed or was stopped before applying the push")
    tick = serializers.IntegerField(allow_null=True, help_text="the tick that applied the push")
    error = serializers.CharField(required=False, help_text="when failed: the run's error")


class ChangeSerializer(serializers.Serializer):
    data = serializers.DictField(help_text="the row, column -> value")
    weight = serializers.IntegerField(help_text="+n inserted, -n deleted")


class OutputsSerializer(serializers.Serializer):
    tick = serializers.IntegerField()
    views = serializers.DictField(child=ChangeSerializer(many=True), help_text="view -> its integrated rows")


class TickDeltasSerializer(serializers.Serializer):
    tick = serializers.IntegerField()
    views = serializers.DictField(child=ChangeSerializer(many=True), help_text="view -> its output delta")
    frontier = serializers.DictField()
    stats = serializers.DictField()


class DeltasSerializer(serializers.Serializer):
    ticks = TickDeltasSerializer(many=True)
    more = serializers.BooleanField(help_text="more ticks after the last one: ask again with since=<last tick>")


class RunListItemSerializer(serializers.ModelSerializer):
    """One run in a list across circuits: what a table of runs shows, read in one query
    (no interface, lag or worker: those are in `GET /api/runs/<id>/`)."""

    circuit_name = serializers.CharField(source="circuit.name", read_only=True)
    version = serializers.IntegerField(source="version.number", read_only=True)
    error = serializers.SerializerMethodField(help_text="The run's error in one short line (the whole of it is in GET /api/runs/<id>/).")
    can_operate = serializers.SerializerMethodField(help_text="Whether the requester may stop, pause or push to the run.")

    class Meta:
        model = Run
        fields = ["id", "circuit", "circuit_name", "version", "status", "current_tick", "error", "can_operate",
                  "created_at", "updated_at"]
        read_only_fields = fields

    def get_error(self, run) -> str:
        return error_preview(run.error)

    def get_can_operate(self, run) -> bool:
        return bool(run.operable)


# --- GET /api/runs/<id>/profile/ and /frontier/ (runs/profile.py builds them) ---------------

class ProfileNodeSerializer(serializers.Serializer):
    node = serializers.CharField()
    kind = serializers.CharField(allow_null=True, help_text="null for a node no longer in the document")
    series = serializers.ListField(child=serializers.FloatField(), help_text="one value per point of `ticks`")
    paths = serializers.ListField(child=serializers.ChoiceField(choices=PATHS, allow_null=True),
                                  help_text="where each point's heaviest tick ran")
    total = serializers.FloatField()
    max = serializers.FloatField()
    path_ticks = serializers.DictField(child=serializers.IntegerField(), help_text="path -> ticks that ran there")
    late_rows = serializers.ListField(child=serializers.FloatField(), required=False, help_text="windows only: late rows per point")
    late_rows_total = serializers.FloatField(required=False, help_text="windows only: late rows in all")


class ProfileTopSerializer(serializers.Serializer):
    node = serializers.CharField()
    kind = serializers.CharField(allow_null=True)
    total = serializers.FloatField()
    share = serializers.FloatField(help_text="of the grand total, 0..1")


class TickSeriesSerializer(serializers.Serializer):
    """What a profile and a frontier history share: the ticks read and their buckets."""

    from_ = serializers.IntegerField(allow_null=True, help_text="first tick read (null: none stored in the range)")
    to = serializers.IntegerField(allow_null=True, help_text="last tick read")
    ticks = serializers.ListField(child=serializers.IntegerField(), help_text="the first tick of each point")
    bucket = serializers.IntegerField(help_text="ticks per point")
    downsampled = serializers.BooleanField()
    truncated = serializers.BooleanField(help_text="the range held more than max_ticks ticks: the newest were read")
    max_ticks = serializers.IntegerField()

    def get_fields(self):
        fields = super().get_fields()
        fields["from"] = fields.pop("from_")  # a Python keyword
        return fields


class RunProfileSerializer(TickSeriesSerializer):
    metric = serializers.ChoiceField(choices=METRICS)
    unit = serializers.CharField()
    aggregate = serializers.ChoiceField(choices=sorted(set(AGGREGATE.values())), help_text="how a point and a total add up its ticks")
    nodes = ProfileNodeSerializer(many=True)
    total = serializers.FloatField()
    top = ProfileTopSerializer(many=True, help_text="the nodes that cost the most")


class FrontierNodeSerializer(serializers.Serializer):
    node = serializers.CharField()
    kind = serializers.CharField(help_text="fixedpoint, or a window kind")
    iterations = serializers.ListField(child=serializers.FloatField(), required=False, help_text="fixed points: iterations per point")
    converged = serializers.ListField(child=serializers.BooleanField(), required=False, help_text="fixed points")
    waterline = serializers.ListField(child=serializers.JSONField(allow_null=True), required=False, help_text="windows: the waterline at each point")
    windows_closed = serializers.ListField(child=serializers.FloatField(), required=False, help_text="windows")
    late_rows = serializers.ListField(child=serializers.FloatField(), required=False, help_text="windows")


class RunFrontierSerializer(TickSeriesSerializer):
    nodes = FrontierNodeSerializer(many=True)


# --- Shared pieces of the answers below ------------------------------------------------------

@extend_schema_field({"type": "object", "additionalProperties": {}, "description": "a row: column -> value"})
class RowField(serializers.DictField):
    """A row as the API sends it: column -> JSON value."""


@extend_schema_field({"oneOf": [{"type": "integer"}, {"type": "array", "items": {"type": "integer"}}], "nullable": True,
                      "description": "inside a fixed point its iteration (a list when nested), else null"})
class IterationField(serializers.JSONField):
    """An iteration of a fixed point: a number, a list of numbers when nested, or null."""


class WeightedRowSerializer(serializers.Serializer):
    data = RowField()
    weight = serializers.IntegerField()


# --- GET /api/runs/<id>/explain/ (runs/explain.py, dbsp/explain/steps.py build it) ----------

class PushRefSerializer(serializers.Serializer):
    """A logged push of an input row."""

    sequence = serializers.IntegerField()
    tick = serializers.IntegerField(help_text="the tick that applied it")
    received_at = serializers.DateTimeField()
    user = serializers.CharField(allow_null=True, help_text="who pushed it (null: the user is gone)")
    weight = serializers.IntegerField()
    row = RowField()


class ExplainUseSerializer(serializers.Serializer):
    """A row an operator used to make its step's row; `step` explains it in turn (or `ref`
    names a step already shown)."""

    port = serializers.CharField()
    node = serializers.CharField()
    iteration = IterationField(allow_null=True)
    row = RowField()
    weight = serializers.IntegerField()
    before = serializers.IntegerField(required=False, help_text="a change: its weight before")
    after = serializers.IntegerField(required=False, help_text="a change: its weight after")
    tick = serializers.IntegerField(required=False, help_text="the tick it is a row of, when not its step's (z⁻¹, I, D, a window's late row)")
    followed = serializers.BooleanField()
    ref = serializers.IntegerField(required=False, help_text="the id of the step shown already that explains it")
    # step: set below (an ExplainStep: the answer is recursive)


class ExplainGroupSerializer(serializers.Serializer):
    label = serializers.CharField()
    total = serializers.IntegerField(help_text="its uses in all (a page of them is shown)")
    offset = serializers.IntegerField()
    dropped = serializers.BooleanField(required=False, help_text="rows the operator dropped (a window's late rows)")
    uses = ExplainUseSerializer(many=True)


class ExplainStepSerializer(serializers.Serializer):
    """One operator's part in the derivation of a row."""

    id = serializers.IntegerField()
    node = serializers.CharField()
    kind = serializers.CharField()
    mode = serializers.ChoiceField(choices=["contents", "change", "value"],
                                   help_text="value: a circuit with z⁻¹, I or D runs as drawn: the node's value at `tick`")
    tick = serializers.IntegerField()
    iteration = IterationField(allow_null=True)
    first_iteration = serializers.BooleanField()
    fixedpoint = serializers.CharField(allow_null=True)
    row = RowField()
    weight = serializers.IntegerField()
    before = serializers.IntegerField(required=False, help_text="a change: the row's weight before")
    after = serializers.IntegerField(required=False)
    note = serializers.CharField(allow_blank=True)
    groups = ExplainGroupSerializer(many=True)
    pushes = PushRefSerializer(many=True, required=False, help_text="an input's step: its pushes (the latest ones)")
    pushes_count = serializers.IntegerField(required=False)


ExplainUseSerializer._declared_fields["step"] = ExplainStepSerializer(required=False)


class InputRowRefSerializer(serializers.Serializer):
    """An input row a derivation reaches, with the pushes that brought it."""

    input = serializers.CharField()
    row = RowField()
    weight = serializers.IntegerField()
    tick = serializers.IntegerField(help_text="the tick it is a row of")
    before = serializers.IntegerField(required=False, help_text="a change: its weight before")
    after = serializers.IntegerField(required=False)
    pushes = PushRefSerializer(many=True, help_text="its pushes (the latest ones)")
    pushes_count = serializers.IntegerField(help_text="its pushes in all")


class ExplanationSerializer(serializers.Serializer):
    """Why a row is in a view at a tick (`contents`) and why it changed then (`change`)."""

    run = serializers.IntegerField()
    tick = serializers.IntegerField()
    view = serializers.CharField(allow_null=True)
    node = serializers.CharField()
    iteration = IterationField(allow_null=True)
    row = RowField()
    weight = serializers.IntegerField(help_text="at the tick")
    before = serializers.IntegerField(help_text="at the tick before")
    truncated = serializers.BooleanField()
    contents = ExplainStepSerializer(allow_null=True, help_text="the derivation of its weight (null: absent)")
    change = ExplainStepSerializer(allow_null=True, help_text="of its change (null: it did not change)")
    inputs = InputRowRefSerializer(many=True, help_text="the input rows the contents derivation reaches")
    causes = InputRowRefSerializer(many=True, help_text="the tick's input changes the change uses")
    # a queued explanation, done
    id = serializers.IntegerField(required=False, help_text="a queued explanation's")
    status = serializers.ChoiceField(choices=["done"], required=False)
    url = serializers.CharField(required=False)


class QueuedErrorSerializer(serializers.Serializer):
    status = serializers.IntegerField()
    detail = serializers.CharField()
    errors = serializers.ListField(child=serializers.DictField())


class QueuedExplanationSerializer(serializers.Serializer):
    """An explanation queued (a large log): poll `url` until it is done."""

    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=["queued", "running", "failed"])
    url = serializers.CharField()
    error = QueuedErrorSerializer(required=False, help_text="failed: the error answer the request would have had")


# --- POST /api/runs/<id>/verify/, GET .../verify/<vid>/ (runs/verify.py, workers/verify.py) ---

class ViewDifferenceSerializer(serializers.Serializer):
    missing = WeightedRowSerializer(many=True, help_text="rows the incremental output lacks (the first ones)")
    extra = WeightedRowSerializer(many=True, help_text="rows it has too many of (the first ones)")
    missing_count = serializers.IntegerField(required=False, help_text="all missing rows")
    extra_count = serializers.IntegerField(required=False, help_text="all extra rows")


class VerificationSerializer(serializers.Serializer):
    """A verification of a run's views at a tick against a recomputation from its log."""

    id = serializers.IntegerField()
    run = serializers.IntegerField()
    tick = serializers.IntegerField()
    status = serializers.ChoiceField(choices=VerificationStatus.choices)
    progress = serializers.FloatField(help_text="0..1")
    method = serializers.ChoiceField(choices=["reference", "spark"], allow_null=True, help_text="what recomputed the views")
    error = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    ok = serializers.BooleanField(required=False, help_text="done: whether every view agrees")
    views = serializers.DictField(child=ViewDifferenceSerializer(), required=False, help_text="done: view -> its differing rows, for the views that differ")


class QueuedVerificationSerializer(VerificationSerializer):
    url = serializers.CharField(help_text="poll it here")


# --- GET /api/runs/<id>/inputs/<input>/rows/ (runs/input_tables.py) ---------------------------

class InputRowsSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    next = serializers.CharField(allow_null=True)
    previous = serializers.CharField(allow_null=True)
    results = WeightedRowSerializer(many=True)
    input = serializers.CharField()
    through_sequence = serializers.IntegerField(help_text="the pushes up to this sequence number are in the rows")


# --- GET /api/runs/<id>/nodes/<node>/ (runs/inspection.py, runs/node_pages.py) ---------------

NODE_KINDS = ["delta", "integral"]


class NodeInspectionPendingSerializer(serializers.Serializer):
    """The tick's inspection is being computed (202; poll again), or it failed (200,
    once: the next request tries again)."""

    status = serializers.ChoiceField(choices=["queued", "running", "failed"])
    progress = serializers.FloatField(help_text="0..1")
    run = serializers.IntegerField()
    tick = serializers.IntegerField()
    node = serializers.CharField()
    kind = serializers.ChoiceField(choices=NODE_KINDS)
    error = serializers.CharField(required=False, help_text="failed: why")


class NodeColumnSerializer(serializers.Serializer):
    name = serializers.CharField()
    type = serializers.CharField()
    nullable = serializers.BooleanField()


class NodeIterationRowsSerializer(serializers.Serializer):
    iteration = IterationField()
    rows = serializers.IntegerField()


class NodeSizesSerializer(serializers.Serializer):
    delta_rows = serializers.IntegerField()
    integral_rows = serializers.IntegerField()
    inserted = serializers.IntegerField()
    deleted = serializers.IntegerField()
    iterations = NodeIterationRowsSerializer(many=True, allow_null=True, help_text="inside fixed points: rows at each inner iteration of the tick")


class NodePageSerializer(serializers.Serializer):
    """A page of a node's delta at a tick or its contents through it."""

    status = serializers.ChoiceField(choices=["done"])
    run = serializers.IntegerField()
    tick = serializers.IntegerField()
    node = serializers.CharField()
    kind = serializers.ChoiceField(choices=NODE_KINDS)
    operator = serializers.CharField(allow_null=True, help_text="the operator's kind (null: not an operator)")
    export = serializers.CharField(required=False, help_text="a fixed point: the export shown")
    method = serializers.CharField(allow_null=True, help_text="what computed the inspection")
    columns = NodeColumnSerializer(many=True)
    rows = WeightedRowSerializer(many=True)
    count = serializers.IntegerField(help_text="rows selected")
    total = serializers.IntegerField(help_text="rows of the node's delta or contents")
    page = serializers.IntegerField()
    page_size = serializers.IntegerField()
    pages = serializers.IntegerField()
    sort = serializers.CharField(allow_null=True)
    desc = serializers.BooleanField()
    filters = serializers.ListField(child=serializers.CharField(), help_text="column:value")
    q = serializers.CharField(allow_null=True)
    sign = serializers.ChoiceField(choices=["positive", "negative"], allow_null=True)
    sizes = NodeSizesSerializer()
    stats = serializers.DictField(help_text="the run's own stats of the node at the tick (rows_in, rows_out, state_rows, "
                                            "ms; the live protocol's NodeStats), or {} when it has none")
