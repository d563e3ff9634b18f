"""What finding the author's change costs per co-editing update (circuits/authorship.py):
reading the server's copy of the shared document whole before and after each update
(layout.to_document) against re-reading only what the update touched
(circuits/collab/reading.py), for a document of 3, 200 and 1,000 nodes; each update moves
one node (a drag). Cross-checked: both give the same diff items for every update.

    PYTHONPATH=. .venv/bin/python -m bench.authorship_reading
"""
import json, time
from pycrdt import Doc, Map
from circuits.collab.layout import seed, to_document
from circuits.collab.reading import CircuitReading
from circuits.diff import diff_documents, changed_items
for n in (3, 200, 1000):
    base = json.load(open("examples/circuits/big_orders.json"))
    for i in range(n - 3):
        base["nodes"].append({"id": f"f{i}", "kind": "filter", "position": {"x": i, "y": 0}, "params": {"predicate": f"amount > {i}"}})
    def run(reader):
        server = seed(base, "t"); writer = Doc(); writer.apply_update(server.get_update())
        r = CircuitReading(server) if reader else None
        before = None if reader else to_document(server)[0]
        N = 100
        ups = []
        for k in range(N):
            u = []; s = writer.observe(lambda e: u.append(e.update))
            with writer.transaction():
                writer.get("nodes", type=Map)["big"]["position"] = {"x": k, "y": k}
            writer.unobserve(s); ups += u
        if reader: r.apply(ups[0])  # the first reads whole
        else: server.apply_update(ups[0]); before = to_document(server)[0]
        t0 = time.perf_counter()
        for u in ups[1:]:
            if reader:
                items = changed_items(diff_documents(*r.apply(u)))
            else:
                server.apply_update(u); after = to_document(server)[0]
                items = changed_items(diff_documents(before, after)); before = after
        return (time.perf_counter() - t0) / (N - 1) * 1000, items
    whole, i1 = run(False); part, i2 = run(True)
    assert i1 == i2, (i1, i2)  # the same items either way
    print(f"{n} nodes: read whole {whole:.2f} ms/update, read what it touched {part:.2f} ms/update")
