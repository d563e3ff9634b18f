"""workers: Celery tasks that own runs — the run lifecycle, the tick loop, Spark."""
