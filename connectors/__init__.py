"""Connectors: a run's sources (Kafka, files) that push into its input tables and sinks
(Kafka, files) that receive its views' deltas, exactly once (docs/connectors.md).

Between runs and workers: it uses the runs layer (the input log, its one value check,
the tick outputs) and is driven by the workers (workers/pumps.py), which hand it the
lease fence so that only the run's holder pushes."""
