"""The engine's command line.

    python -m dbsp validate CIRCUIT.json          every problem, one JSON object per line
    python -m dbsp plan CIRCUIT.json              the compiled incremental plan (a document)
    python -m dbsp run CIRCUIT.json PUSHES.jsonl  per tick, the output deltas as JSON lines
    python -m dbsp run VIEWS.sql [--until-idle]   the same, fed by the connectors it declares
    python -m dbsp sql VIEWS.sql                  the circuit document compiled from SQL views
    python -m dbsp export-sql CIRCUIT.json        the SQL of a circuit (when SQL can express it)
    python -m dbsp datalog PROGRAM.dl             the circuit a Datalog program compiles to

Wherever a circuit is read, a `.sql` file (CREATE TABLE / CREATE VIEW, docs/sql.md)
is compiled to its circuit first; SQL problems print as FILE:LINE:COLUMN: message.
A Datalog program (a `.dl` file) may stand instead too: it is compiled first
(docs/datalog.md); its input relations without a `.decl` take their columns from the
pushes file given to `run` (or `datalog --pushes`).

A pushes file has one line per tick: {"<input>": [change records...], ...}; an empty
object (or blank line) is an empty tick. Change records: {"insert": row},
{"delete": row}, {"weight": w, "data": row}. `--backend reference` runs the pure-Python
oracle instead of Spark. A tick that fails stops the run with exit status 1 and one
line naming the pushes line, the tick, the node and its operator:
`pushes.jsonl:3: tick 2: node 'scaled' (map): ValueOutOfRange: '*' gave ..., outside the bigint range (64 bits)`.
A tick that deletes a row an input (without a primary key or
`allow_negative`) does not hold is refused (dbsp/inputs.py): exit 1 naming the record.
Without a pushes file, `run` runs the connectors the circuit declares (`WITH ('connectors'
= ...)` in SQL; docs/connectors.md, "Without the server: the command line"): sources polled
into ticks, each tick's view deltas written to the sinks, exactly once across restarts
through a state folder (`--state`, default `.dbsp-state/<circuit name>`; connectors/standalone.py).
`--until-idle` exits 0 once every source is drained and every sink has the last tick;
without it, it runs until Ctrl-C. A record a connector cannot push exits 1 with one line
naming the connector, the record's position and the column.
`--verify` recomputes every view from scratch with the reference evaluator at every tick
and compares it with the integrated incremental outputs: on a difference it prints the
differing rows (missing/extra, with weights) and exits 3.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .connector_specs import declared_in
from .errors import CircuitInvalid, DataInvalid, TickFailed
from .inputs import InputTable, checks_deletes
from .plan import compile_plan
from .runtime import changes_and_items
from .validate import validate
from .verify import Verifier


class _SqlRefused(Exception):
    pass


def _load(path: str, pushes: str | None = None):
    with open(path) as f:
        if not path.endswith((".sql", ".dl")):
            return json.load(f)
        text = f.read()
    if path.endswith(".dl"):
        from .datalog import compile_program, schemas_from_pushes

        schemas = None
        if pushes is not None:
            with open(pushes) as p:
                schemas = schemas_from_pushes([json.loads(line) for line in p if line.strip()])
        return compile_program(text, schemas)
    from .sql import SqlError, compile_sql

    try:
        return compile_sql(text)
    except SqlError as e:
        for p in e.problems:
            where = f"{path}:{p.span.line}:{p.span.column}" if p.span else path
            print(f"{where}: {p.message}", file=sys.stderr)
        raise _SqlRefused() from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dbsp", description="DBSP circuits on Spark")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("validate", help="list every problem of a circuit").add_argument("circuit")
    sub.add_parser("plan", help="print the compiled incremental plan").add_argument("circuit")
    run = sub.add_parser("run", help="run a circuit over a pushes file, or fed by the connectors it declares")
    run.add_argument("circuit")
    run.add_argument("pushes", nargs="?",
                     help="one line of changes per tick; without it, the connectors the circuit declares feed it")
    run.add_argument("--until-idle", action="store_true",
                     help="with connectors: exit once every source is drained and every sink has the last tick")
    run.add_argument("--state", help="with connectors: the folder keeping the sources' positions and the logged "
                                     "ticks, to resume exactly once (default .dbsp-state/<circuit name>)")
    run.add_argument("--backend", choices=["spark", "reference"], default="spark")
    run.add_argument("--stats", action="store_true", help="include frontier and stats per tick")
    run.add_argument("--verify", action="store_true",
                     help="at every tick, compare the integrated outputs with a from-scratch reference recomputation")
    sub.add_parser("sql", help="print the circuit document compiled from SQL views").add_argument("views")
    sub.add_parser("export-sql", help="print the SQL of a circuit").add_argument("circuit")
    datalog = sub.add_parser("datalog", help="print the circuit document a Datalog program compiles to")
    datalog.add_argument("circuit", metavar="program")
    datalog.add_argument("--pushes", help="a pushes file typing the input relations without a .decl")
    args = parser.parse_args(argv)
    from .datalog import DatalogInvalid

    connected = args.command == "run" and args.pushes is None
    if connected:
        # The command line is an application over the whole stack: running a circuit's
        # connectors takes the connectors package (.importlinter's one ignored import;
        # docs/architecture.md). The kinds go to the engine before the circuit is read,
        # so its connectors are checked against them (in SQL, with their line:column).
        from connectors import standalone

        standalone.hand_kinds_to_the_engine()
    path = args.views if args.command == "sql" else args.circuit
    try:
        document = _load(path, getattr(args, "pushes", None))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as e:
        print(f"cannot read {path}: {e}", file=sys.stderr)
        return 2
    except _SqlRefused:
        return 1
    except DatalogInvalid as e:
        for p in e.problems:
            print(json.dumps(p.as_dict() | {"file": path}), file=sys.stderr)
        return 1
    if args.command == "sql":
        print(json.dumps(document, indent=2))
        return 0
    if args.command == "datalog":
        print(json.dumps(document, indent=1, ensure_ascii=False))
        return 0
    if args.command == "export-sql":
        from .sql import NotExpressible, export_sql

        try:
            print(export_sql(document), end="")
        except NotExpressible as e:
            print(str(e), file=sys.stderr)
            return 1
        except CircuitInvalid as e:
            for p in e.problems:
                print(json.dumps(p.as_dict()), file=sys.stderr)
            return 1
        return 0
    if args.command == "validate":
        problems = validate(document)
        for p in problems:
            print(json.dumps(p.as_dict()))
        if not problems:
            print(json.dumps({"valid": True}))
        return 1 if problems else 0
    if connected and not declared_in(document):
        print(f"{path}: declares no connectors: give a pushes file (python -m dbsp run CIRCUIT PUSHES)",
              file=sys.stderr)
        return 2
    try:
        plan = compile_plan(document)
    except CircuitInvalid as e:
        for p in e.problems:
            print(json.dumps(p.as_dict()), file=sys.stderr)
        return 1
    if args.command == "plan":
        print(json.dumps(plan.describe(), indent=2))
        return 0

    if args.backend == "reference":
        from .reference import ReferenceRuntime

        runtime = ReferenceRuntime(plan)
    else:
        from .spark import SparkRuntime

        runtime = SparkRuntime(plan)
    verifier = Verifier(plan) if args.verify else None
    if connected:
        return standalone.run(document, plan, runtime, verifier, standalone.Options(
            path, Path(args.state) if args.state else standalone.default_state(path), args.until_idle, args.stats))
    tables = {name: InputTable(name, schema, checks_deletes(plan, name)) for name, schema in plan.inputs.items()}
    with open(args.pushes) as f:
        for line_no, line in enumerate(f, 1):
            tick = json.loads(line) if line.strip() else {}
            try:
                changes = {}
                for name, records in tick.items():
                    if name not in plan.inputs:
                        raise KeyError(name)
                    changes[name], items = changes_and_items(records, plan.inputs[name], plan.primary_key(name))
                    tables[name].check(items)
                for name, change in changes.items():
                    if tables[name].checked:
                        tables[name].apply(change)
                result = runtime.step(changes)
            except KeyError as e:
                print(f"{args.pushes}:{line_no}: no input named {e}", file=sys.stderr)
                return 1
            except DataInvalid as e:
                for p in e.problems:
                    print(f"{args.pushes}:{line_no}: {p.message}", file=sys.stderr)
                return 1
            except TickFailed as e:  # names the node and its operator
                print(f"{args.pushes}:{line_no}: tick {runtime.tick}: {e}", file=sys.stderr)
                return 1
            outputs = result.outputs_json()
            record = {"tick": result.tick, "outputs": outputs}
            if args.stats:
                record |= {"frontier": result.frontier, "stats": result.stats, "ms": result.ms}
            print(json.dumps(record), flush=True)
            if verifier is not None:
                differences = verifier.step(changes, outputs)
                if differences:
                    print(json.dumps({"tick": result.tick, "verified": False, "differences": differences}), flush=True)
                    print(f"{args.pushes}:{line_no}: tick {result.tick}: the incremental outputs differ from the "
                          f"reference recomputation in {', '.join(sorted(differences))}", file=sys.stderr)
                    return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
