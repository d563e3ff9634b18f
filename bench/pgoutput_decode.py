"""The PostgreSQL source's per-change and per-row Python, before and after (issue 27), in
one process, alternately: an update message of `orders(id, region, amount, seq)`
(REPLICA IDENTITY FULL: old and new rows) decoded by the reader the source had
(tests/connectors/pgoutput_reference.py) and by connectors/pgoutput.py; a snapshot row's
four text values converted by `from_text` per value and by the per-column converters.
Cross-check: both sides give the same values.

    .venv/bin/python -m bench.pgoutput_decode [--number 50000]
"""
from __future__ import annotations

import argparse
import struct
import timeit


def tuple_data(*values: str) -> bytes:
    out = struct.pack(">h", len(values))
    for v in values:
        data = v.encode()
        out += b"t" + struct.pack(">i", len(data)) + data
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--number", type=int, default=50_000)
    args = parser.parse_args()
    from connectors import pgoutput
    from connectors.postgres import converter, from_text
    from tests.connectors import pgoutput_reference

    message = (b"U" + struct.pack(">I", 16385) + b"O" + tuple_data("123456", "r07", "912", "3") + b"N"
               + tuple_data("123456", "r07", "913", "44"))
    assert pgoutput_reference.decode(message) == pgoutput.decode(message)
    columns = [("id", "bigint"), ("region", "string"), ("amount", "bigint"), ("seq", "bigint")]
    values = ["123456", "r07", "912", "3"]
    converters = [(name, converter(type_)) for name, type_ in columns]

    def row_before():
        return {name: from_text(text, type_) for (name, type_), text in zip(columns, values)}

    def row_after():
        return {name: convert(text) for (name, convert), text in zip(converters, values)}

    assert row_before() == row_after()
    n = args.number
    ways = {"decode, reference reader": lambda: pgoutput_reference.decode(message),
            "decode, connectors/pgoutput": lambda: pgoutput.decode(message),
            "row, from_text per value": row_before, "row, per-column converters": row_after}
    best = {name: float("inf") for name in ways}
    for _ in range(5):  # alternately, the best of each
        for name, way in ways.items():
            best[name] = min(best[name], timeit.timeit(way, number=n) / n * 1e6)
    for name, us in best.items():
        print(f"{name}: {us:.2f} us")
    print(f"decode: {best['decode, reference reader'] / best['decode, connectors/pgoutput']:.2f}x; "
          f"row: {best['row, from_text per value'] / best['row, per-column converters']:.2f}x")


if __name__ == "__main__":
    main()
