"""circuits: what a circuit is — circuits, their immutable versions, tags, sharing and access,
validation and plans of documents. Runs, the input log and outputs are the runs app's
(runs/); this app knows nothing of them (docs/architecture.md)."""
