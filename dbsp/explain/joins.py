"""Why a row comes out of a join: the matching pair (a left row and a right row with
equal keys). Contents: the pairs present; change: the pairs whose product of weights
changed at the tick (Δ(a ⋈ b) = Δa ⋈ I(b) + z⁻¹(I(a)) ⋈ Δb), each side shown with its
weights before and after, so the side that did not change reads as the old partner.
semijoin: the left row and the right rows that match its key; antijoin: the left row,
and that no right row matches (change: the right rows of its key that came or went);
left_join: a pair, or the left row padded with NULLs when nothing matches; asof_join: the
left row and the right row of its key it matched (or that none is on the match's side)."""
from __future__ import annotations

from .rows import row_order, rows_of, same_or_changed, uses
from .steps import Group, Use


def _key_label(names, values) -> str:
    return ", ".join(f"{n} = {v!r}" for n, v in zip(names, values))


def _pairs(join, row, after, before):
    n_left = len(join.input_schemas["left"].columns)
    x = row[:n_left]
    key = tuple(x[i] for i in join._lk)
    if None in key:
        return []
    rest = row[n_left:]
    groups = []
    matching = [y for y in rows_of(after["right"], before and before["right"])
                if tuple(y[i] for i in join._rk) == key and tuple(y[i] for i in join._rkeep) == rest]
    for y in sorted(matching, key=row_order):
        a1, b1 = after["left"].weight(x), after["right"].weight(y)
        if before is None:
            if a1 * b1:
                groups.append(Group(_pair_label(join, key), [Use("left", x, a1), Use("right", y, b1)]))
            continue
        a0, b0 = before["left"].weight(x), before["right"].weight(y)
        if a0 * b0 != a1 * b1:
            groups.append(Group(_pair_label(join, key), [Use("left", x, a1, a0), Use("right", y, b1, b0)]))
    return groups


def _pair_label(join, key) -> str:
    return f"pair on {_key_label(join.left_keys, key)}" if join.left_keys else "pair (cartesian product)"


def why_join(op, row, after, before):
    return _pairs(op, row, after, before)


def _matches(op, row, after, before):
    key = tuple(row[i] for i in op._lk)
    right = [y for y in rows_of(after["right"], before and before["right"]) if tuple(y[i] for i in op._rk) == key]
    return key, right


def why_semijoin(op, row, after, before):
    left = same_or_changed("left", row, after["left"], before and before["left"])
    key, right = _matches(op, row, after, before)
    label = _key_label(op.right_keys, key)
    return [Group("the left row", [left] if left else []),
            Group(f"right rows with {label}", uses("right", right, after["right"], before and before["right"]))]


def why_antijoin(op, row, after, before):
    left = same_or_changed("left", row, after["left"], before and before["left"])
    key, right = _matches(op, row, after, before)
    label = _key_label(op.right_keys, key)
    groups = [Group("the left row", [left] if left else [])]
    if before is None:
        groups.append(Group(f"no right row has {label}", []))
    else:
        groups.append(Group(f"right rows with {label} that changed", uses("right", right, after["right"], before["right"])))
    return groups


def why_left_join(op, row, after, before):
    groups = _pairs(op.inner, row, after, before)
    n_left = len(op.input_schemas["left"].columns)
    if all(v is None for v in row[n_left:]):
        x = row[:n_left]
        left = same_or_changed("left", x, after["left"], before and before["left"])
        key, right = _matches(op, x, after, before)
        label = _key_label(op.right_keys, key)
        if before is None:
            groups.append(Group(f"the left row, no right row has {label}: padded with NULLs", [left] if left else []))
        else:
            groups.append(Group(f"the left row, padded with NULLs when no right row has {label}", [left] if left else []))
            groups.append(Group(f"right rows with {label} that changed",
                                uses("right", right, after["right"], before["right"])))
    return groups


def why_asof_join(op, row, after, before):
    """The left row, and the right rows of its key: the one it matched (nearest in time on
    the match's side) or, for a row padded with NULLs, that none is on that side. Change:
    the left row and the right rows of its key that came or went (a right change
    re-matches only the left rows of its key)."""
    n_left = len(op.input_schemas["left"].columns)
    x = row[:n_left]
    left = same_or_changed("left", x, after["left"], before and before["left"])
    key = tuple(x[i] for i in op._lk)
    label = _key_label(op.right_keys, key)
    groups = [Group("the left row", [left] if left else [])]
    if None in key:
        groups.append(Group("its key is NULL: no right row matches", []))
        return groups
    right = [y for y in rows_of(after["right"], before and before["right"]) if tuple(y[i] for i in op._rk) == key]
    if before is None:
        matched = op.nearest(op.index(after["right"]), x)
        if matched is None:
            groups.append(Group(f"no right row with {label} has {op.right_time} {_SIDE[op.match]} "
                                f"{x[op._lt]!r}: padded with NULLs", []))
        else:
            groups.append(Group(f"the right row with {label} nearest {op.left_time} = {x[op._lt]!r} "
                                f"({op.right_time} {_SIDE[op.match]} it)", uses("right", [matched], after["right"], None)))
    else:
        groups.append(Group(f"right rows with {label} that changed", uses("right", right, after["right"], before["right"])))
    return groups


#: the right time's side of the left time, per match
_SIDE = {">=": "<=", ">": "<", "<=": ">=", "<": ">"}

RULES = {"join": why_join, "semijoin": why_semijoin, "antijoin": why_antijoin, "left_join": why_left_join,
         "asof_join": why_asof_join}
