"""A loopback HTTP proxy that records every exchange on its way to the sandbox.

:class:`RecordingProxy` listens on a free port and forwards each request, as sent, to a target
base address; it keeps an :class:`Exchange` (method, path, query, headers, body, status and the
answer's body) per request, so a test can check every request a flow sent and every answer it
got against the published contract.

>>> with RecordingProxy("http://127.0.0.1:9") as proxy:
...     proxy.url.startswith("http://127.0.0.1:")
True
"""

from __future__ import annotations

import http.client
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from urllib.parse import parse_qs, urlsplit

__all__ = ["Exchange", "RecordingProxy"]

TIMEOUT = 30.0
_HOP = {"connection", "keep-alive", "transfer-encoding", "host", "content-length"}


@dataclass(frozen=True)
class Exchange:
    """One request as sent and the answer it got."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    status: int
    answer: bytes
    answer_type: str


class RecordingProxy:
    """Forward ``http://127.0.0.1:<port>/...`` to ``target/...`` and record each exchange."""

    def __init__(self, target: str) -> None:
        parts = urlsplit(target)
        self.exchanges: list[Exchange] = []
        lock = threading.Lock()
        exchanges = self.exchanges
        host, port = parts.hostname or "127.0.0.1", parts.port or 80

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # quiet
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
                conn = http.client.HTTPConnection(host, port, timeout=TIMEOUT)
                try:
                    conn.request(self.command, self.path, body=body or None, headers=headers)
                    answer = conn.getresponse()
                    data = answer.read()
                    out_headers = [(k, v) for k, v in answer.getheaders() if k.lower() not in _HOP]
                    status = answer.status
                finally:
                    conn.close()
                split = urlsplit(self.path)
                with lock:
                    exchanges.append(
                        Exchange(
                            self.command,
                            split.path,
                            parse_qs(split.query, keep_blank_values=True),
                            dict(self.headers.items()),
                            body,
                            status,
                            data,
                            dict(out_headers).get("content-type", ""),
                        )
                    )
                self.send_response_only(status)
                for key, value in out_headers:
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _forward

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="recording-proxy",
            daemon=True,
        )

    def __enter__(self) -> RecordingProxy:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
