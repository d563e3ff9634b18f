"""Runs of the example circuits with real tick outputs: each push of the example's
pushes file is one tick of the reference evaluator (or the Spark runtime), stored as the
worker stores it (TickOutput.stats and .frontier), for the profile and frontier endpoints."""
import json

from circuits import services
from dbsp import compile_plan
from dbsp.runtime import changes_from_records
from runs.models import Run, TickOutput
from tests.conftest import EXAMPLES, example


def pushes(name):
    return [json.loads(line) for line in (EXAMPLES / f"{name}.pushes.jsonl").read_text().splitlines()]


def profiled_run(owner, name, runtime_of=None, visibility="public"):
    from dbsp.reference import ReferenceRuntime

    document = example(name)
    circuit = services.create_circuit(owner, name, "", visibility, document)
    plan = compile_plan(document)
    runtime = (runtime_of or ReferenceRuntime)(plan)
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=owner, status="running")
    for push in pushes(name):
        result = runtime.step({i: changes_from_records(records, plan.inputs[i]) for i, records in push.items()})
        TickOutput.objects.create(run=run, tick=result.tick, deltas=result.outputs_json(), frontier=result.frontier,
                                  stats=result.stats, ms=result.ms)
    run.current_tick = runtime.tick
    run.save()
    return run
