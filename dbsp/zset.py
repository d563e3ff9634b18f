"""Z-sets: finite maps row -> nonzero integer weight, an abelian group under `+`.

A table is a Z-set with positive weights; a change to a table is any Z-set. Rows are
tuples in their schema's column order. Every value a ZSet holds is consolidated: equal
rows have their weights summed and rows whose weight is 0 are dropped.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator


class ZSet:
    __slots__ = ("_w",)

    def __init__(self, items: Iterable[tuple[tuple, int]] = ()):
        self._w: dict[tuple, int] = {}
        for row, weight in items:
            self._add(row, weight)

    @classmethod
    def of_columns(cls, rows: list[tuple], weights: list[int]) -> "ZSet":
        """rows[i] with weights[i]: one dict build when the rows are distinct and no weight
        is 0 (a consolidated table's, the common case), else summed row by row."""
        z = cls.__new__(cls)
        z._w = dict(zip(rows, weights))
        if len(z._w) == len(weights) and 0 not in z._w.values():
            return z
        return cls(zip(rows, weights))

    def _add(self, row: tuple, weight: int) -> None:
        w = self._w.get(row, 0) + weight
        if w:
            self._w[row] = w
        else:
            self._w.pop(row, None)

    def __add__(self, other: "ZSet") -> "ZSet":
        out = ZSet(self._w.items())
        for row, w in other._w.items():
            out._add(row, w)
        return out

    def __neg__(self) -> "ZSet":
        return ZSet((r, -w) for r, w in self._w.items())

    def __sub__(self, other: "ZSet") -> "ZSet":
        return self + (-other)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ZSet) and self._w == other._w

    def __len__(self) -> int:
        return len(self._w)

    def __bool__(self) -> bool:
        return bool(self._w)

    def __iter__(self) -> Iterator[tuple[tuple, int]]:
        return iter(self._w.items())

    def __repr__(self) -> str:
        return f"ZSet({dict(self._w)!r})"

    def weight(self, row: tuple) -> int:
        return self._w.get(row, 0)

    def map_rows(self, fn) -> "ZSet":
        return ZSet((fn(r), w) for r, w in self._w.items())

    def filter_rows(self, pred) -> "ZSet":
        return ZSet((r, w) for r, w in self._w.items() if pred(r))

    def is_positive(self) -> bool:
        return all(w > 0 for w in self._w.values())
