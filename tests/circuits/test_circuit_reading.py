"""circuits/collab/reading.py: the socket's copy of the shared document read as a circuit
document, re-reading only what each update touched, gives the same diff as reading the
whole document before and after (layout.to_document), over a run of random edits of every
kind with someone else's updates in between. Pure: pycrdt documents, no server."""
from __future__ import annotations

import copy
import random

from pycrdt import Doc, Map, Text

from circuits.collab.layout import seed, to_document
from circuits.collab.reading import CircuitReading
from circuits.diff import changed_items, diff_documents
from tests.conftest import example



def test_reading_only_what_an_update_touched_gives_the_diff_of_the_whole_documents():
    document = copy.deepcopy(example("big_orders"))
    document["metadata"] = {"source": {"language": "sql", "text": "SELECT 1"}}
    server = seed(document, "t")
    reading = CircuitReading(server)
    writer, other = Doc(), Doc()
    for peer in (writer, other):
        peer.apply_update(server.get_update())
    rng = random.Random(29)

    def edit(peer, k):
        nodes, edges = peer.get("nodes", type=Map), peer.get("edges", type=Map)
        ids = sorted(nodes.keys())
        kind = rng.randrange(8)
        if kind == 0 and ids:
            nodes[rng.choice(ids)]["position"] = {"x": k, "y": -k}
        elif kind == 1 and ids:
            node = nodes[rng.choice(ids)]
            if isinstance(node.get("params"), Map):
                node["params"]["p"] = k
        elif kind == 2:
            nodes[f"n{k}"] = Map({"kind": "filter", "order": k, "params": Map({"predicate": "amount > 1"})})
        elif kind == 3 and len(ids) > 2:
            del nodes[rng.choice(ids)]
        elif kind == 4 and len(ids) > 1:
            a, b = rng.sample(ids, 2)
            edges[f"{a}.out->{b}.in"] = {"edge": {"from": {"node": a, "port": "out"}, "to": {"node": b, "port": "in"}}, "order": k}
        elif kind == 5 and len(edges):
            del edges[rng.choice(sorted(edges.keys()))]
        elif kind == 6:
            peer.get("source", type=Text).insert(0, f"-- {k}\n")
        elif kind == 7 and ids:
            nodes[rng.choice(ids)]["label"] = f"L{k}"

    def send(peer, k):
        updates = []
        sub = peer.observe(lambda event: updates.append(event.update))
        with peer.transaction():
            edit(peer, k)
        peer.unobserve(sub)
        return updates

    for k in range(300):
        for update in send(other, k):  # someone else's, as the socket applies it (no reading asked)
            server.apply_update(update)
            writer.apply_update(update)
        for update in send(writer, 1000 + k):
            whole_before = to_document(server)[0]
            change = reading.apply(update)
            whole_after = to_document(server)[0]
            other.apply_update(update)
            assert change is not None
            expected = changed_items(diff_documents(whole_before, whole_after))
            assert sorted(map(str, changed_items(diff_documents(*change)))) == sorted(map(str, expected)), k
    reading.close()
