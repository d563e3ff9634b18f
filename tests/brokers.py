"""Real message brokers for the connector tests, each its own instance on a free port in
a temporary folder (nothing shared with other test runs): redis-server, nats-server with
JetStream, mosquitto. A broker missing from the machine is installed with apt-get when
that is possible (as scripts/lib.sh does for redis), else its tests skip saying why."""
from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

PACKAGES = {"redis-server": "redis-server", "nats-server": "nats-server", "mosquitto": "mosquitto"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def executable(name: str) -> str:
    """The broker's program, installed with apt-get when missing (and allowed), else a skip."""
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/bin")
    if found:
        return found
    if shutil.which("apt-get") and subprocess.run(["id", "-u"], capture_output=True, text=True).stdout.strip() == "0":
        subprocess.run(["apt-get", "update", "-qq"], capture_output=True)
        subprocess.run(["apt-get", "install", "-y", "-qq", PACKAGES[name]], capture_output=True,
                       env={"DEBIAN_FRONTEND": "noninteractive", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
        found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/bin")
        if found:
            return found
    pytest.skip(f"{name} is not installed and could not be installed (apt-get install {PACKAGES[name]})")


class Broker:
    """One broker process; `ready()` is tried until it answers (or the process died)."""

    def __init__(self, name: str, args: list[str], folder: Path, port: int, ready):
        self.name, self.port, self.folder, self.args, self.ready = name, port, folder, args, ready
        self.log = folder / f"{name}.log"
        self.start()

    def start(self) -> None:
        """Start the process (again: the same port, the same data folder) and wait until it answers."""
        with open(self.log, "ab") as out:
            self.process = subprocess.Popen(self.args, stdout=out, stderr=subprocess.STDOUT, cwd=self.folder)
        name, port, ready = self.name, self.port, self.ready
        deadline = time.monotonic() + 60
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"{name} exited ({self.process.returncode}): {self.log.read_text()[-2000:]}")
            try:
                if ready():
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"{name} did not answer on port {port}: {self.log.read_text()[-2000:]}")
            time.sleep(0.05)  # between tries of the port, not a wait for a state

    def stop(self) -> None:
        """A clean shutdown (SIGTERM: a broker saves what it persists), then `start()` may restart it."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _answers(port: int) -> bool:
    with socket.create_connection(("127.0.0.1", port), timeout=1):
        return True


def start_redis(folder: Path, persistent: bool = False) -> Broker:
    """`persistent`: an append-only file written at every command, so a restart keeps the streams."""
    import redis

    port = free_port()

    def ready():
        try:
            return redis.Redis(port=port, socket_connect_timeout=1).ping()
        except redis.ConnectionError:  # not an OSError: not up yet (or still loading its file)
            return False

    saving = ["--appendonly", "yes", "--appendfsync", "always"] if persistent else ["--appendonly", "no"]
    broker = Broker("redis-server", [executable("redis-server"), "--bind", "127.0.0.1", "--port", str(port),
                                     "--dir", str(folder), "--save", "", *saving], folder, port, ready)
    broker.url = f"redis://127.0.0.1:{port}/0"
    return broker


def start_nats(folder: Path) -> Broker:
    port, monitor = free_port(), free_port()

    def ready():  # the monitoring endpoint says the server (and JetStream) is up
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{monitor}/healthz?js-enabled-only=true", timeout=1) as r:
            return r.status == 200

    broker = Broker("nats-server", [executable("nats-server"), "-js", "-a", "127.0.0.1", "-p", str(port),
                                    "-m", str(monitor), "-sd", str(folder / "js")], folder, port, ready)
    broker.url = f"nats://127.0.0.1:{port}"
    return broker


def start_mosquitto(folder: Path) -> Broker:
    port = free_port()
    config = folder / "mosquitto.conf"
    # persistence: QoS 1 sessions and their queued messages survive the client's absence, and
    # a restart (saved at shutdown). Run as root, mosquitto would drop to the `mosquitto` user,
    # which may not write the test's folder: it stays the user it was started as.
    import getpass

    config.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence true\n"
                      f"persistence_location {folder}/\nmax_queued_messages 100000\nuser {getpass.getuser()}\n")
    broker = Broker("mosquitto", [executable("mosquitto"), "-c", str(config)], folder, port, lambda: _answers(port))
    broker.host = "127.0.0.1"
    return broker
