"""Who this worker process is: its id (node name + pid, unique even across restarts
under the same node name) and its own Celery queue, where tasks for the runs it holds
are sent. Set when the Celery worker starts (`celeryd_after_setup`); other processes
(the web server, tests) keep the host:pid default and never hold leases."""
from __future__ import annotations

import os
import socket

_me = {"worker": f"{socket.gethostname()}:{os.getpid()}", "queue": ""}


def worker_id() -> str:
    return _me["worker"]


def own_queue() -> str:
    return _me["queue"]


def become(nodename: str, default_queue: str) -> str:
    """Name this process after its Celery node; returns its own queue's name."""
    pid = os.getpid()
    _me["worker"] = f"{nodename}:{pid}"
    _me["queue"] = f"{default_queue}.w.{nodename}.{pid}"
    return _me["queue"]
