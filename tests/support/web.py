"""A loopback HTTP server with scripted routes that counts every request it receives."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Response:
    status: int = 200
    body: bytes = b""
    content_type: str = "text/html; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)


Route = Callable[[], Response]


@dataclass
class CountingServer:
    base_url: str
    routes: dict[str, Route]
    hits: Counter[str]

    def html(self, path: str, body: str, status: int = 200) -> None:
        self.routes[path] = lambda: Response(status=status, body=body.encode())

    def total_hits(self) -> int:
        return sum(self.hits.values())


@contextmanager
def counting_server() -> Iterator[CountingServer]:
    routes: dict[str, Route] = {}
    hits: Counter[str] = Counter()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits[self.path] += 1
            route = routes.get(self.path)
            response = route() if route else Response(status=404, body=b"not found")
            self.send_response(response.status)
            self.send_header("Content-Type", response.content_type)
            self.send_header("Content-Length", str(len(response.body)))
            for name, value in response.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(response.body)

        def log_message(self, format: str, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield CountingServer(f"http://127.0.0.1:{server.server_address[1]}", routes, hits)
    finally:
        server.shutdown()
        server.server_close()
