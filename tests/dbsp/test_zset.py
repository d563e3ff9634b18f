import pytest

from dbsp import ZSet


def test_plus_sums_weights_and_drops_zeros():
    a = ZSet([(("x",), 2), (("y",), 1)])
    b = ZSet([(("x",), -2), (("z",), 3)])
    assert a + b == ZSet([(("y",), 1), (("z",), 3)])
    assert (a + b).weight(("x",)) == 0
    assert len(a + b) == 2


def test_group_laws():
    a = ZSet([((1,), 1), ((2,), -1)])
    assert a - a == ZSet()
    assert -(-a) == a
    assert a + ZSet() == a


def test_construction_consolidates_equal_rows():
    assert ZSet([((1,), 1), ((1,), 1), ((1,), -2)]) == ZSet()
    assert ZSet([((1,), 1), ((1,), 1)]).weight((1,)) == 2


@pytest.mark.parametrize("rows, weights", [
    ([(1, "a"), (2, "b")], [1, -2]),                      # distinct: one dict build
    ([(1, "a"), (1, "a"), (2, "b")], [1, 2, -1]),         # a repeated row: summed
    ([(1, "a"), (1, "a")], [1, -1]),                      # summed to 0: dropped
    ([(1, "a"), (2, "b")], [0, 3]),                       # a weight of 0: dropped
    ([(0.0,), (-0.0,)], [1, 1]),                          # equal in Python, distinct in Arrow: summed
    ([(), ()], [2, 3]),                                   # no columns
])
def test_a_zset_of_columns_is_the_summed_zset(rows, weights):
    got = ZSet.of_columns(rows, weights)
    assert got == ZSet(zip(rows, weights))
    assert 0 not in dict(got).values()
