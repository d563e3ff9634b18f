"""The websocket tests' communicator: channels' WebsocketCommunicator with one generous
wait for every message the test awaits (connect, receive, disconnect), the same limit
as the browser tests' (`DBSPWEB_TEST_TIMEOUT_S`, 90 s: README, testing notes). A wait
ends when its message comes; only a failing test waits this long. channels' own default
is 1 s, which a busy machine (a worker's tick, another suite on the same cores) passes
between two messages. `receive_nothing` keeps its short default: it checks that nothing
comes, and a busy machine can only make it pass, not fail."""
import os

from channels.testing import WebsocketCommunicator

WAIT_S = float(os.environ.get("DBSPWEB_TEST_TIMEOUT_S", "90"))


class Communicator(WebsocketCommunicator):
    async def connect(self, timeout=WAIT_S):
        return await super().connect(timeout)

    async def receive_output(self, timeout=WAIT_S):
        return await super().receive_output(timeout)

    async def receive_from(self, timeout=WAIT_S):
        return await super().receive_from(timeout)

    async def receive_json_from(self, timeout=WAIT_S):
        return await super().receive_json_from(timeout)

    async def disconnect(self, code=1000, timeout=WAIT_S):
        return await super().disconnect(code, timeout)
