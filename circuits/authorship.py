"""Who changed what: the authorship of a version's changes (docs/collaboration.md,
"Who changed what").

- While people edit the shared document, the server records, for each update a writer
  sends, who sent it (the socket's signed-in user) and what it changed, as items of a
  circuit diff (circuits/diff.py: a node added or removed, one field of a node, a wire, one
  field of the document such as its SQL text): `record`, into the ledger
  (`SharedDocumentEdit`). One row per person and item since the last version, however
  often they change it, so dragging a node makes two rows (`position.x`, `position.y`),
  not thousands. Compaction of the shared document leaves the ledger alone.
- Saving a version (`attribute`) names, for each item of the diff from the previous
  version, the people recorded for it in the order they first changed it; an item nobody
  is recorded for (an edit saved through the REST API without co-editing) is the saver's.
  An item whose changes cancelled out is not in the diff, so nobody is named for it. The
  names are kept on the version (`CircuitVersion.authors`) and the ledger is emptied.
- A diff between any two versions (`authors_between`) names, for each of its items, the
  people named for that item by the versions in between, in order.

A node added since the previous version is authored by whoever added it and whoever
changed its fields afterwards.
"""
from __future__ import annotations

import json

from django.db.models import Q

from .diff import NODE_ADDED, NODE_CHANGED, REVERSED, changed_items, diff_documents, item_key
from .models import CircuitVersion, SharedDocumentEdit


def _dedup(names) -> list[str]:
    return list(dict.fromkeys(names))


def record(document_id: int, user_id: int, before: dict, after: dict) -> int:
    """Note that `user_id` changed the shared document from `before` to `after` (circuit
    documents). Returns how many items the change touched."""
    items = changed_items(diff_documents(before, after))
    if items:
        SharedDocumentEdit.objects.bulk_create(
            [SharedDocumentEdit(document_id=document_id, user_id=user_id, item=item_key(i)) for i in items],
            ignore_conflicts=True,  # already recorded for this person since the last version
        )
    return len(items)


def _named(items: list[dict], authors_of) -> list[dict]:
    """Each item with its authors; `authors_of(key)` gives the names recorded for a key.
    A node added is also authored by those who changed its fields."""
    out = []
    for item in items:
        names = list(authors_of(item_key(item)))
        if item["change"] == NODE_ADDED:
            names += authors_of(("fields of", item["node"]))
        out.append({**item, "authors": _dedup(names)})
    return out


def attribute(circuit, before: dict | None, after: dict, saver=None) -> list[dict]:
    """The authors of every item of the diff from `before` (the previous version's
    document) to `after` (the one being saved), from the ledger of the circuit's shared
    document, which this empties. Call it in the transaction that saves the version."""
    rows = list(SharedDocumentEdit.objects.filter(document__circuit=circuit).order_by("id")
                .values_list("id", "item", "user__username"))
    by_key: dict = {}
    for _, key, name in rows:
        by_key.setdefault(key, []).append(name)
        change, node, _field, _edge = _parse(key)
        if change == NODE_CHANGED:
            by_key.setdefault(("fields of", node), []).append(name)
    saver_name = [saver.get_username()] if saver is not None and saver.is_authenticated else []
    items = _named(changed_items(diff_documents(before, after)), lambda key: by_key.get(key, []))
    for item in items:
        if not item["authors"]:
            item["authors"] = saver_name  # nobody co-edited it: whoever saved made the change
    if rows:
        SharedDocumentEdit.objects.filter(document__circuit=circuit, id__lte=rows[-1][0]).delete()
    return items


def _parse(key: str) -> tuple:
    return tuple(json.loads(key))


def authors_between(circuit, a: int, b: int, diff: dict) -> list[dict]:
    """The items of `diff` (version a to version b) with the people the versions between
    them named for each, in version order."""
    low, high = min(a, b), max(a, b)
    by_key: dict = {}
    versions = CircuitVersion.objects.filter(Q(circuit=circuit) & Q(number__gt=low) & Q(number__lte=high)).order_by("number")
    for entries in versions.values_list("authors", flat=True):
        for entry in entries or []:
            names = entry.get("authors") or []
            by_key.setdefault(item_key(entry), []).extend(names)
            if entry.get("change") == NODE_CHANGED:
                by_key.setdefault(("fields of", entry.get("node")), []).extend(names)

    def authors_of(key):
        if isinstance(key, str) and a > b:  # the diff runs backwards: what it adds, the versions removed
            change, node, field, edge = _parse(key)
            key = item_key({"change": REVERSED.get(change, change), "node": node, "field": field, "edge": edge})
        return by_key.get(key, [])

    items = changed_items(diff)
    if a > b:  # a node the backward diff adds is one the versions removed: no field authors
        return [{**item, "authors": _dedup(authors_of(item_key(item)))} for item in items]
    return _named(items, authors_of)
