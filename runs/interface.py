"""What a run takes and gives: the inputs (with schemas) and views of its circuit version."""
from __future__ import annotations

from circuits.services import ServiceError, plan_for

from .models import Run


def run_interface(run: Run) -> dict:
    """The inputs (with schemas) and views of a run's circuit version."""
    plan = plan_for(run.version)
    return {
        "inputs": [{"name": name, "schema": schema.as_list()} for name, schema in plan.inputs.items()],
        "views": list(plan.views),
    }


def input_schema(run: Run, input_name: str):
    """The schema of one input of a run's circuit version; 404 naming the inputs if none."""
    plan = plan_for(run.version)
    schema = plan.inputs.get(input_name)
    if schema is None:
        names = ", ".join(plan.inputs) or "none"
        raise ServiceError(f"Run {run.pk} has no input {input_name!r} (inputs: {names}).", 404)
    return schema
