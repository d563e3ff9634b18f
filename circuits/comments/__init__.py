"""Comments pinned to nodes (docs/collaboration.md, "Comments").

- mentions.py: `@username` in a body, resolved to users who may read the circuit.
- nodes.py: the node ids a thread may be pinned to (shared document and latest version).
- present.py: threads, comments and mentions as the API and the live messages show them.
- live.py: after a commit, the circuit's document sockets are told (message type 101).
- handler.py: every change to threads, comments and mentions; who may do what.
"""
