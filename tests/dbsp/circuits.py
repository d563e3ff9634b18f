"""Random relational circuits and change sequences for property tests (hypothesis)."""
from __future__ import annotations

import json

from hypothesis import strategies as st

T1 = [{"name": "k", "type": "bigint"}, {"name": "v", "type": "bigint"}, {"name": "s", "type": "string"}]
T2 = [{"name": "k", "type": "bigint"}, {"name": "x", "type": "bigint"}, {"name": "l", "type": "array<bigint>"}]
# A keyed table (upsert) with an event time: windows over it see in-order and
# out-of-order times, replacements (−old +new) and deletes by key.
T3 = [{"name": "id", "type": "bigint"}, {"name": "ts", "type": "bigint"}, {"name": "y", "type": "bigint"}]
WINDOW_COLUMNS = {"window_start", "window_end"}

KEYS = st.sampled_from([0, 1, 2, None])
SMALL = st.sampled_from([-2, -1, 0, 1, 3, None])
WORDS = st.sampled_from(["a", "b c", "a b", "", None])
# lists: NULL, empty, duplicate and NULL elements (as tuples and as JSON arrays alike)
LISTS = st.sampled_from([None, [], [1], [1, 1], [2, None], [0, 3]])


class Builder:
    def __init__(self):
        self.nodes, self.edges, self.streams, self.n = [], [], [], 0

    def node(self, kind, params, sources, cols):
        self.n += 1
        node_id = f"{kind}{self.n}"
        self.nodes.append({"id": node_id, "kind": kind, "params": params})
        for port, src in sources.items():
            self.edges.append({"from": {"node": src, "port": "out"}, "to": {"node": node_id, "port": port}})
        self.streams.append((node_id, cols))
        return node_id

    def document(self):
        nodes, edges = list(self.nodes), list(self.edges)
        for node_id, _ in self.streams:
            if not node_id.startswith("input"):
                view = f"view_{node_id}"
                nodes.append({"id": view, "kind": "output", "params": {}})
                edges.append({"from": {"node": node_id, "port": "out"}, "to": {"node": view, "port": "in"}})
        return {"format": "dbspweb.circuit", "version": 1, "nodes": nodes, "edges": edges}


def bigints(cols):
    return [c["name"] for c in cols if c["type"] == "bigint"]


def lists(cols):
    return [c["name"] for c in cols if c["type"].startswith("array<")]


def draw_right(draw, b, nums):
    """A right input for a join-like node, its columns renamed apart, and a key pair."""
    right, rcols = draw(st.sampled_from([(s, c) for s, c in b.streams if bigints(c)]))
    prefix = f"r{b.n + 1}_"
    renamed = b.node("map", {"columns": [{"name": prefix + c["name"], "expr": c["name"]} for c in rcols]}, {"in": right},
                     [{**c, "name": prefix + c["name"]} for c in rcols])
    return renamed, rcols, prefix, draw(st.sampled_from(nums)), prefix + draw(st.sampled_from(bigints(rcols)))


def draw_window(draw, b, src, cols, nums):
    """A tumbling, sliding or session windowed aggregate over a bigint event time."""
    time = draw(st.sampled_from(nums))
    nums = bigints(cols)
    kind = draw(st.sampled_from(["tumbling_window", "sliding_window", "session_window"]))
    params = {"time": time, "lateness": draw(st.sampled_from([0, 1, 4])),
              "group_by": draw(st.sampled_from([[]] + [[c["name"]] for c in cols if c["name"] != time][:2]))}
    if kind == "tumbling_window":
        params["size"] = draw(st.sampled_from([1, 2, 5]))
    elif kind == "sliding_window":
        params["size"], params["slide"] = draw(st.sampled_from([(4, 2), (5, 2), (3, 3)]))
    else:
        params["gap"] = draw(st.sampled_from([1, 2, 4]))
    aggs, out_cols = [], [c for c in cols if c["name"] in params["group_by"]]
    out_cols += [{"name": "window_start", "type": "bigint"}, {"name": "window_end", "type": "bigint"}]
    for i, fn in enumerate(draw(st.lists(st.sampled_from(["count", "sum", "avg", "min", "max"]), min_size=1, max_size=2, unique=True))):
        aggs.append({"fn": fn, "expr": draw(st.sampled_from(nums)), "as": f"a{b.n + 1}_{i}"})
        out_cols.append({"name": f"a{b.n + 1}_{i}", "type": "double" if fn in ("avg", "avg_distinct") else "bigint"})
    params["aggregates"] = aggs
    b.node(kind, params, {"in": src}, out_cols)


def out_of_order(cols):
    """A group_by of two columns in the reverse of their order in the input (the touched
    keys' tables then differ from the schema's order)."""
    scalars = [c["name"] for c in cols if c["name"] not in lists(cols)]
    return [[scalars[1], scalars[0]]] if len(scalars) >= 2 else []


@st.composite
def circuits(draw, max_ops=4, window_first=False):
    """window_first: start with a window over t1 (plain table) or t3 (keyed table)."""
    b = Builder()
    b.nodes += [{"id": "t1", "kind": "input", "params": {"schema": T1}}, {"id": "t2", "kind": "input", "params": {"schema": T2}},
                {"id": "t3", "kind": "input", "params": {"schema": T3, "primary_key": ["id"]}}]
    b.streams += [("t1", T1), ("t2", T2), ("t3", T3)]
    if window_first:
        src, cols = draw(st.sampled_from([("t3", T3), ("t1", T1)]))
        draw_window(draw, b, src, cols, ["ts"] if src == "t3" else ["v", "k"])
    for _ in range(draw(st.integers(1, max_ops))):
        src, cols = draw(st.sampled_from(b.streams))
        nums = bigints(cols)
        kind = draw(st.sampled_from(["filter", "map", "distinct", "union", "difference", "join", "aggregate", "flat_map",
                                     "semijoin", "antijoin", "left_join", "top_k", "window"]))
        if kind == "filter" and nums:
            c = draw(st.sampled_from(nums))
            preds = [f"{c} > 0", f"{c} IS NULL", f"{c} % 2 = 0 OR {c} IS NULL", f"{c} BETWEEN -1 AND 1", f"NOT ({c} IN (1, 2))"]
            preds += [f"array_contains({x}, 1) OR cardinality({x}) = 0" for x in lists(cols)]
            pred = draw(st.sampled_from(preds))
            b.node("filter", {"predicate": pred}, {"in": src}, cols)
        elif kind == "map" and nums:
            c = draw(st.sampled_from(nums))
            name = f"m{b.n + 1}"
            exprs = [{"name": name, "expr": draw(st.sampled_from([f"{c} + 1", f"{c} * 2", f"{c} / 2", f"{c} % 2"]
                                                                 + [f"coalesce(element_at({x}, -1), cardinality({x}))" for x in lists(cols)]))}]
            keep = [x["name"] for x in cols if draw(st.booleans())]
            out = [{"name": n, "expr": n} for n in keep] + exprs
            types = {x["name"]: x["type"] for x in cols}
            out_cols = [{"name": n, "type": types[n]} for n in keep] + [{"name": name, "type": "double" if "/" in exprs[0]["expr"] else "bigint"}]
            b.node("map", {"columns": out}, {"in": src}, out_cols)
        elif kind == "distinct":
            b.node("distinct", {}, {"in": src}, cols)
        elif kind in ("union", "difference"):
            same = [s for s, c in b.streams if c == cols]
            other = draw(st.sampled_from(same))
            b.node(kind, {}, {"a": src, "b": other}, cols)
        elif kind == "join" and nums:
            renamed, rcols, prefix, lk, rk = draw_right(draw, b, nums)
            keys = draw(st.sampled_from([([lk], [rk]), ([], [])]))
            b.node("join", {"left_keys": keys[0], "right_keys": keys[1]}, {"left": src, "right": renamed},
                   cols + [{**c, "name": prefix + c["name"]} for c in rcols])
        elif kind in ("semijoin", "antijoin", "left_join") and nums:
            renamed, rcols, prefix, lk, rk = draw_right(draw, b, nums)
            out = cols if kind != "left_join" else cols + [{**c, "name": prefix + c["name"]} for c in rcols]
            b.node(kind, {"left_keys": [lk], "right_keys": [rk]}, {"left": src, "right": renamed}, out)
        elif kind == "top_k":
            group = draw(st.sampled_from([[], [cols[0]["name"]]] + out_of_order(cols)))
            scalars = [c for c in cols if c["name"] not in lists(cols)]  # lists have no order (they break ties)
            order = [{"column": c["name"], "desc": draw(st.booleans())}
                     for c in draw(st.lists(st.sampled_from(scalars), min_size=1, max_size=2, unique_by=lambda c: c["name"]))]
            b.node("top_k", {"group_by": group, "order_by": order, "k": draw(st.integers(1, 3))}, {"in": src}, cols)
        elif kind == "aggregate" and nums:
            group = draw(st.sampled_from([[], [nums[0]]] + ([[c["name"] for c in cols if c["type"] == "string"]] if any(c["type"] == "string" for c in cols) else [])
                                         + [[x] for x in lists(cols)[:1]] + out_of_order(cols)))
            by_name = {c["name"]: c for c in cols}
            aggs, out_cols = [], [by_name[g] for g in group]
            for i, fn in enumerate(draw(st.lists(st.sampled_from(["count", "sum", "avg", "min", "max", "count_distinct", "sum_distinct", "avg_distinct"]), min_size=1, max_size=3, unique=True))):
                arg = draw(st.sampled_from(nums))
                aggs.append({"fn": fn, "expr": arg if fn != "count" or draw(st.booleans()) else None, "as": f"a{b.n + 1}_{i}"})
                out_cols.append({"name": f"a{b.n + 1}_{i}", "type": "double" if fn in ("avg", "avg_distinct") else "bigint"})
            b.node("aggregate", {"group_by": group, "aggregates": aggs}, {"in": src}, out_cols)
        elif kind == "window" and nums and not WINDOW_COLUMNS & {c["name"] for c in cols}:
            draw_window(draw, b, src, cols, nums)
        elif kind == "flat_map" and any(c["type"] == "string" or c["name"] in lists(cols) for c in cols):
            c = draw(st.sampled_from([c for c in cols if c["type"] == "string" or c["name"] in lists(cols)]))
            if c["type"] == "string":
                b.node("flat_map", {"column": c["name"], "separator": " "}, {"in": src},
                       [x for x in cols if x["name"] != c["name"]] + [{"name": c["name"], "type": "string"}])
            else:  # explode a list: one row per element, NULL elements included
                b.node("flat_map", {"column": c["name"]}, {"in": src},
                       [x for x in cols if x["name"] != c["name"]] + [{"name": c["name"], "type": c["type"][6:-1]}])
    return b.document()


def record(row_strategy):
    return st.tuples(st.sampled_from(["insert", "delete", "weight"]), row_strategy, st.sampled_from([-2, 2, 3])).map(
        lambda t: {t[0]: t[1]} if t[0] != "weight" else {"weight": t[2], "data": t[1]})


T1_ROWS = st.fixed_dictionaries({"k": KEYS, "v": SMALL, "s": WORDS})
T2_ROWS = st.fixed_dictionaries({"k": KEYS, "x": SMALL, "l": LISTS})

# The keyed table: ids collide (replacements, deletes by key of other values, deletes of
# absent keys); event times jump forwards and backwards (late rows).
T3_ROWS = st.fixed_dictionaries({"id": st.sampled_from([0, 1, 2, 3]), "ts": st.one_of(st.integers(0, 12), st.none()), "y": SMALL})
KEYED_RECORD = st.tuples(st.sampled_from(["insert", "insert", "delete", "weight"]), T3_ROWS, st.sampled_from([-1, 1])).map(
    lambda t: {t[0]: t[1]} if t[0] != "weight" else {"weight": t[2], "data": t[1]})

# A tick: some records per input (possibly none: empty ticks), duplicates and deletes of
# absent rows included.
TICKS = st.lists(
    st.fixed_dictionaries({"t1": st.lists(record(T1_ROWS), max_size=4), "t2": st.lists(record(T2_ROWS), max_size=3),
                           "t3": st.lists(KEYED_RECORD, max_size=4)}),
    min_size=1, max_size=5,
)

# Ticks for windows: more of them, event times moving forwards and back, so rows arrive
# late against the waterline, deletes reach closed windows, and state is collected.
WINDOW_TICKS = st.lists(
    st.fixed_dictionaries({"t1": st.lists(record(T1_ROWS), max_size=4),
                           "t3": st.lists(KEYED_RECORD.map(lambda r: _shift_ts(r)), max_size=5)}),
    min_size=3, max_size=7,
)


def _shift_ts(rec):
    data = rec.get("insert") or rec.get("delete") or rec.get("data")
    if data["ts"] is not None:
        data["ts"] = data["ts"] * 3 - 6  # -6 .. 30
    return rec


def _key(row: dict) -> str:
    return json.dumps(row, sort_keys=True)


def _extreme(rows: list[dict], column: str, pick_max: bool):
    valued = [r for r in rows if r[column] is not None]
    return (max if pick_max else min)(valued, key=lambda r: r[column]) if valued else None


@st.composite
def histories(draw, first_max=10, ticks_max=5):
    """Ticks whose later changes mostly delete rows that are there — the current minimum
    or maximum of a column, any present row — and reinsert deleted ones, besides random
    records (deletes of absent rows included). A first tick of up to `first_max` rows
    puts the later small deletes in state parts apart from their inserts (a trace's
    small new level is not merged into a four times larger one)."""
    inputs = {"t1": (T1_ROWS, "v"), "t2": (T2_ROWS, "x")}
    present = {name: {} for name in inputs}  # key -> [row, copies]
    deleted = {name: [] for name in inputs}
    ticks = []
    for t in range(draw(st.integers(1, ticks_max))):
        tick = {"t3": draw(st.lists(KEYED_RECORD, max_size=3))}
        for name, (rows, column) in inputs.items():
            records = []
            if t == 0:
                records = [{"insert": r} for r in draw(st.lists(rows, min_size=1, max_size=first_max))]
            else:
                for action in draw(st.lists(st.sampled_from(["min", "max", "present", "reinsert", "random"]), max_size=4)):
                    live = [r for r, n in present[name].values() if n > 0]
                    if action in ("min", "max") and (row := _extreme(live, column, action == "max")) is not None:
                        records.append({"delete": row})
                    elif action == "present" and live:
                        records.append({"delete": draw(st.sampled_from(live))})
                    elif action == "reinsert" and deleted[name]:
                        records.append({"insert": draw(st.sampled_from(deleted[name]))})
                    elif action == "random":
                        records.append(draw(record(rows)))
                    else:
                        continue
                    _apply(present[name], deleted[name], records[-1])
            if t == 0:
                for r in records:
                    _apply(present[name], deleted[name], r)
            tick[name] = records
        ticks.append(tick)
    return ticks


def _apply(present: dict, deleted: list, rec: dict) -> None:
    row = rec.get("insert") or rec.get("delete") or rec["data"]
    w = 1 if "insert" in rec else -1 if "delete" in rec else rec["weight"]
    entry = present.setdefault(_key(row), [row, 0])
    entry[1] += w
    if w < 0:
        deleted.append(row)
