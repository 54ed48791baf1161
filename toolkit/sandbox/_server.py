"""Run the sandbox app under uvicorn: in a background thread, or in the foreground.

The listening socket is bound before uvicorn starts, so the port (even ``0``, a free one) is
known at once; readiness is a :class:`threading.Event` set from uvicorn's startup, never a
sleep loop.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable
from typing import Any

import uvicorn

__all__ = ["ServerThread", "bind", "serve_forever"]

START_TIMEOUT = 30.0
"""Seconds to wait for the server to start before giving up."""


def bind(host: str, port: int) -> socket.socket:
    """Bind a listening TCP socket (port 0 picks a free port).

    Args:
        host: Interface address, for example ``127.0.0.1`` or ``::1``.
        port: Port, or 0 for any free port.

    Returns:
        The listening socket; ``getsockname()[1]`` is the port.

    Raises:
        OSError: The address is in use or cannot be bound.

    >>> sock = bind("127.0.0.1", 0)
    >>> sock.getsockname()[1] > 0
    True
    >>> sock.close()
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP matters: asyncio sets TCP_NODELAY only on such sockets, and without
    # it every response on a kept-alive connection waits ~40 ms for a delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        if os.name == "posix":
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except BaseException:
        sock.close()
        raise
    return sock


class _Server(uvicorn.Server):
    """A uvicorn server that reports the end of its startup."""

    def __init__(self, config: uvicorn.Config, on_started: Callable[[], None]) -> None:
        super().__init__(config)
        self._on_started = on_started

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started:
            self._on_started()


def _config(app: Any, log_level: str) -> uvicorn.Config:
    return uvicorn.Config(
        app,
        log_level=log_level,
        lifespan="off",
        access_log=log_level == "debug",
        timeout_graceful_shutdown=5,
        timeout_keep_alive=5,
    )


class ServerThread:
    """Serve an ASGI app from a daemon thread on an already bound socket.

    Args:
        app: The ASGI application.
        sock: A listening socket (see :func:`bind`); closed by :meth:`stop`.
        log_level: uvicorn's log level.

    >>> from fastapi import FastAPI
    >>> server = ServerThread(FastAPI(), bind("127.0.0.1", 0))
    >>> server.start()
    >>> server.stop()
    """

    def __init__(self, app: Any, sock: socket.socket, *, log_level: str = "warning") -> None:
        self.sock = sock
        self._ready = threading.Event()
        self._server = _Server(_config(app, log_level), self._ready.set)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="toolkit-sandbox", daemon=True)

    def _run(self) -> None:
        try:
            self._server.run(sockets=[self.sock])
        except BaseException as exc:  # noqa: BLE001 - reported to the starting thread
            self._error = exc
        finally:
            self._ready.set()

    def start(self, timeout: float = START_TIMEOUT) -> None:
        """Start serving and wait until the server accepts requests.

        Args:
            timeout: Seconds to wait for startup.

        Raises:
            RuntimeError: The server failed or did not start in time.
        """
        self._thread.start()
        if not self._ready.wait(timeout):
            self.stop()
            raise RuntimeError(f"sandbox server did not start within {timeout} s")
        if not self._server.started:
            self.stop()
            raise RuntimeError(f"sandbox server failed to start: {self._error!r}")

    def stop(self, timeout: float = 10.0) -> None:
        """Ask the server to exit, wait for the thread, close the socket.

        Args:
            timeout: Seconds to wait for the thread to end.
        """
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout)
        if self._thread.is_alive():
            self._server.force_exit = True
            self._thread.join(timeout)
        self.sock.close()


def serve_forever(
    app: Any,
    sock: socket.socket,
    *,
    log_level: str = "info",
    on_started: Callable[[], None] | None = None,
) -> None:
    """Serve in the foreground until SIGINT or SIGTERM.

    Args:
        app: The ASGI application.
        sock: A listening socket (see :func:`bind`).
        log_level: uvicorn's log level.
        on_started: Called once the server accepts requests.
    """
    server = _Server(_config(app, log_level), on_started or (lambda: None))
    server.run(sockets=[sock])
