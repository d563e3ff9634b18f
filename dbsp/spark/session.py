"""One SparkSession per process, configured for small, frequent jobs (SPARK-NOTES.md):
few shuffle partitions, Arrow on, no UI or console progress. Local mode by default;
`master` (e.g. spark://host:7077) for a standalone cluster, `remote` (sc://host:15002)
for Spark Connect. The same engine code runs on all three."""
from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass

_lock = threading.Lock()
_session = None


@dataclass(frozen=True)
class SparkConfig:
    master: str = "local[2]"
    remote: str = ""
    shuffle_partitions: int = 2
    driver_host: str = ""
    driver_memory: str = "2g"
    #: executors' memory and cores on a cluster (empty: Spark's defaults, 1g and all of a
    #: standalone worker's cores); an executor larger than a worker waits forever
    executor_memory: str = ""
    executor_cores: str = ""
    app_name: str = "dbspweb"

    @classmethod
    def from_env(cls) -> "SparkConfig":
        return cls(
            master=os.environ.get("SPARK_MASTER", "local[2]"),
            remote=os.environ.get("SPARK_REMOTE", ""),
            shuffle_partitions=int(os.environ.get("SPARK_SHUFFLE_PARTITIONS", "2")),
            driver_host=os.environ.get("SPARK_DRIVER_HOST", ""),
            driver_memory=os.environ.get("SPARK_DRIVER_MEMORY", "2g"),
            executor_memory=os.environ.get("SPARK_EXECUTOR_MEMORY", ""),
            executor_cores=os.environ.get("SPARK_EXECUTOR_CORES", ""),
        )


def get_session(config: SparkConfig | None = None):
    """The process's SparkSession, started on first use (5-9 s for the JVM)."""
    global _session
    with _lock:
        if _session is not None:
            return _session
        from pyspark.sql import SparkSession

        # Any Python worker Spark starts must be this interpreter (same minor version).
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        config = config or SparkConfig.from_env()
        builder = SparkSession.builder.appName(config.app_name)
        if config.remote:
            builder = builder.remote(config.remote)
        else:
            builder = (
                builder.master(config.master)
                .config("spark.ui.enabled", "false")
                .config("spark.ui.showConsoleProgress", "false")
                .config("spark.driver.memory", config.driver_memory)
                # a tick's tasks ahead of background work's (level merges, the warm-up: their
                # own pool, trace.MERGE_POOL) at each free core; one thread's jobs stay FIFO
                .config("spark.scheduler.mode", "FAIR")
            )
            if config.driver_host:
                builder = builder.config("spark.driver.host", config.driver_host)
            if config.executor_memory:
                builder = builder.config("spark.executor.memory", config.executor_memory)
            if config.executor_cores:
                builder = builder.config("spark.executor.cores", config.executor_cores)
        builder = (
            builder.config("spark.sql.shuffle.partitions", str(config.shuffle_partitions))
            .config("spark.sql.execution.arrow.pyspark.enabled", "true")
            .config("spark.sql.session.timeZone", "UTC")
        )
        _session = builder.getOrCreate()
        if not config.remote:
            _session.sparkContext.setLogLevel("WARN")
        return _session


def stop_session() -> None:
    global _session
    with _lock:
        if _session is not None:
            _session.stop()
            _session = None
