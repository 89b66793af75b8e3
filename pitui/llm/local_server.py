"""A threaded HTTP server on 127.0.0.1 run in the background (the demo model; the tests' scripted
server builds on it too): start, stop, context manager, port."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: Any


class BackgroundHTTPServer:
    """Serves ``handler_class`` (whose requests reach this object as ``self.server.owner``)."""

    handler_class: type[BaseHTTPRequestHandler]
    thread_name = "pitui-local-server"
    poll_interval = 0.1

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        if host != "127.0.0.1":
            raise ValueError("local servers only listen on 127.0.0.1")
        self._address = (host, port)
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> Self:
        if self._httpd is not None:
            return self
        self._stopping.clear()
        httpd = _HTTPServer(self._address, self.handler_class)
        httpd.owner = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": self.poll_interval},
            name=self.thread_name,
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        httpd, thread = self._httpd, self._thread
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        httpd.server_close()
        if thread is not None:
            thread.join(timeout)
        self._httpd = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._httpd is not None

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the server is not running")
        return int(self._httpd.server_address[1])
