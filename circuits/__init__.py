"""circuits: the system of record — circuits, versions, runs, the input log, outputs."""
