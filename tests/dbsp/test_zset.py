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
