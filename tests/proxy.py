"""A loopback TCP proxy that drops connections at random, for tests of lost answers.

:class:`DroppingProxy` forwards every connection to a target port. When an answer starts to
come back, it draws (from its own seeded random source): with probability ``before`` it closes
both sides without forwarding anything (the request was applied, its answer is lost); with
probability ``after`` it forwards that first chunk and then closes both sides (the answer may
be cut, and the kept-alive connection is gone); otherwise it forwards as usual.

>>> with DroppingProxy(9, before=0.0, after=0.0) as proxy:
...     proxy.url.startswith("http://127.0.0.1:")
True
"""

from __future__ import annotations

import random
import socket
import threading
from types import TracebackType

__all__ = ["DroppingProxy"]


class DroppingProxy:
    """Forward ``127.0.0.1:<port>`` to ``127.0.0.1:<target>``, dropping answers at random.

    Args:
        target: the port to forward to.
        before: probability of closing an answer's connection before forwarding it.
        after: probability of closing it after forwarding its first chunk.
        seed: seed of the random source.
    """

    def __init__(self, target: int, *, before: float, after: float, seed: int = 0) -> None:
        self.target = target
        self.before = before
        self.after = after
        self._random = random.Random(seed)
        self._lock = threading.Lock()
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._server.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        self.drops = {"before": 0, "after": 0, "answers": 0}
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._accept, name="dropping-proxy", daemon=True)

    def __enter__(self) -> DroppingProxy:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._closed.set()
        self._server.close()

    def _draw(self) -> str:
        with self._lock:
            self.drops["answers"] += 1
            x = self._random.random()
            what = "before" if x < self.before else "after" if x < self.before + self.after else ""
            if what:
                self.drops[what] += 1
            return what

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target), timeout=5)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            state = {"asked": False}
            threading.Thread(
                target=self._pump, args=(client, upstream, state, True), daemon=True
            ).start()
            threading.Thread(
                target=self._pump, args=(upstream, client, state, False), daemon=True
            ).start()

    def _pump(
        self, src: socket.socket, dst: socket.socket, state: dict[str, bool], request: bool
    ) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if request:
                    state["asked"] = True
                elif state["asked"]:  # the first chunk of an answer
                    state["asked"] = False
                    what = self._draw()
                    if what == "before":
                        break
                    if what == "after":
                        dst.sendall(data)
                        break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()
