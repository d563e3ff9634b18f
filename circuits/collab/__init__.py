"""Designing together: each circuit's shared Yjs document (docs/collaboration.md).

- layout.py: the document's layout (nodes, edges, text, title) and seeding it from a version.
- store.py: the document in the database (appended updates, compacted).
- consumer.py: `ws/circuits/<id>/doc`, the y-websocket protocol with roles and presence.
"""
