"""Nexmark: the generator, the queries (queries/qN.sql) and the bench (python -m bench.nexmark)."""
