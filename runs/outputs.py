"""What a run's ticks produced, read back: each view integrated up to a tick, and the
per-node frontier and stats of one tick."""
from __future__ import annotations

import json

from circuits.services import ServiceError
from dbsp.verify import integrate

from .interface import run_interface
from .models import Run


def integrated_views(run: Run, upto_tick: int | None = None) -> dict[str, list[dict]]:
    """Each output view's contents (the integral of its deltas) as of a tick."""
    views: dict[str, dict[str, tuple[dict, int]]] = {}
    ticks = run.ticks.all()
    if upto_tick is not None:
        ticks = ticks.filter(tick__lte=upto_tick)
    for view in run_interface(run)["views"]:
        views[view] = {}
    for out in ticks.order_by("tick").only("deltas"):
        for view, rows in out.deltas.items():
            integrate(views.setdefault(view, {}), rows, key=_exact_key)
    return {view: [{"data": d, "weight": w} for _, (d, w) in sorted(acc.items())] for view, acc in views.items()}


def _exact_key(data: dict) -> str:
    return json.dumps(data, sort_keys=True)


def run_stats(run: Run, tick: int | None = None) -> dict:
    """Per-node frontier and stats (rows in/out, state rows, ms) of one tick of a run."""
    tick = run.current_tick if tick is None else tick
    out = run.ticks.filter(tick=tick).first()
    if out is None:
        if tick == run.current_tick == -1:
            return {"tick": -1, "ms": 0.0, "nodes": []}
        raise ServiceError(f"Run {run.pk} has no tick {tick} (current tick: {run.current_tick}).", 404)
    # Circuit order (JSON objects stored in PostgreSQL's jsonb lose their key order).
    order = {n: i for i, n in enumerate(_node_order(run.version.document))}
    node_ids = sorted(dict.fromkeys([*out.frontier, *out.stats]), key=lambda n: order.get(n, len(order)))
    nodes = [{"node": n, "frontier": out.frontier.get(n), **(out.stats.get(n) or {})} for n in node_ids]
    return {"tick": out.tick, "ms": out.ms, "nodes": nodes}


def _node_order(document: dict) -> list[str]:
    """Node ids in document order, each fixed point followed by its subcircuit's nodes."""
    ids = []
    for node in document.get("nodes", []):
        ids.append(node.get("id"))
        if isinstance(node.get("subcircuit"), dict):
            ids.extend(_node_order(node["subcircuit"]))
    return ids
