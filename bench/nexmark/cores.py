"""One core against two: the bench's core configurations as child processes.

A configuration of N cores is a child process (bench/nexmark/worker.py) started under
`taskset -c <the first N CPUs this process may use>` with `SPARK_MASTER=local[N]`: the
Python driver, the engine's driver paths and the JVM that PySpark starts (it inherits
the affinity) all run on those N CPUs, and Spark schedules N tasks at a time. The other
Spark settings (shuffle partitions, driver memory) are the same in every configuration,
so the core count is the only difference. Each child warms up once and stays up; the
bench asks them in turn, query by query, alternating which goes first (ABBA), so a
change in the machine's load falls on both alike.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass

from bench.nexmark.worker import MARK


class WorkerFailed(RuntimeError):
    pass


def cpu_list(cores: int, available: set[int] | None = None) -> str:
    """taskset's list for `cores` CPUs: the lowest of those this process may use."""
    available = sorted(os.sched_getaffinity(0) if available is None else available)
    if cores < 1:
        raise ValueError(f"--cores: {cores} is not a core count (1 or more)")
    if cores > len(available):
        raise ValueError(f"--cores: {cores} cores asked, this process may use {len(available)} "
                         f"(CPUs {','.join(map(str, available))})")
    return ",".join(str(c) for c in available[:cores])


def worker_argv(cores: int, events: int, batch: int, seed: int, check: str, sss: bool,
                python: str = sys.executable, available: set[int] | None = None) -> list[str]:
    """The command line of one configuration's child process."""
    argv = ["taskset", "-c", cpu_list(cores, available), python, "-m", "bench.nexmark.worker",
            "--events", str(events), "--batch", str(batch), "--seed", str(seed), "--check", check]
    return argv + (["--sss"] if sss else [])


def worker_env(cores: int, base: dict[str, str] | None = None) -> dict[str, str]:
    """The child's environment: the parent's, Spark's master set to `local[cores]`."""
    env = dict(os.environ if base is None else base)
    env["SPARK_MASTER"] = f"local[{cores}]"
    env.setdefault("PYTHONPATH", ".")
    return env


def turns(configs: list[int], index: int) -> list[int]:
    """The order the configurations are asked in for the index-th request: as given,
    then reversed, alternately (1 2, 2 1, 1 2, ...)."""
    return list(configs) if index % 2 == 0 else list(reversed(configs))


@dataclass
class Worker:
    cores: int
    process: subprocess.Popen
    ready: dict

    @classmethod
    def start(cls, cores: int, argv: list[str], env: dict[str, str]) -> "Worker":
        process = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                   bufsize=1)
        worker = cls(cores, process, {})
        worker.ready = worker._receive()
        return worker

    def _receive(self) -> dict:
        for line in self.process.stdout:
            if line.startswith(MARK):
                return json.loads(line[len(MARK):])
        code = self.process.wait()
        raise WorkerFailed(f"the {self.cores}-core worker exited ({code}) before answering (its stderr is above)")

    def ask(self, request: dict) -> dict:
        if self.process.poll() is not None:
            raise WorkerFailed(f"the {self.cores}-core worker has exited ({self.process.returncode})")
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        return self._receive()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
