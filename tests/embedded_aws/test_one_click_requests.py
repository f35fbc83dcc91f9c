"""A one-click request as a provider makes it: tried again after a 5xx, never after a 4xx."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from embedded_aws.one_click_requests import PROVIDER_ATTEMPTS, request_as_a_provider


class _Answers(BaseHTTPRequestHandler):
    statuses: list[int] = []
    bodies: list[bytes] = []

    def do_POST(self) -> None:
        self.bodies.append(self.rfile.read(int(self.headers["Content-Length"])))
        status = self.statuses.pop(0)
        self.send_response(status)
        self.end_headers()
        self.wfile.write(f"answer {status}".encode())

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture
def server() -> Iterator[tuple[str, type[_Answers]]]:
    handler = type("Handler", (_Answers,), {"statuses": [], "bodies": []})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/u/token", handler
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.parametrize(
    ("statuses", "status", "retries", "requests"),
    [
        ([200], 200, 0, 1),
        ([502, 503, 200], 200, 2, 3),
        ([502, 502, 502, 200], 502, 2, PROVIDER_ATTEMPTS),
        ([400, 200], 400, 0, 1),
    ],
)
def test_a_5xx_is_requested_again_up_to_the_attempts_and_a_4xx_never(
    server: tuple[str, type[_Answers]], statuses: list[int], status: int, retries: int, requests: int
) -> None:
    url, handler = server
    handler.statuses.extend(statuses)

    answer = request_as_a_provider(url, method="POST", body=b"List-Unsubscribe=One-Click")

    assert (answer.status, answer.retries, len(handler.bodies)) == (status, retries, requests)
    assert answer.page == f"answer {status}"
    assert set(handler.bodies) == {b"List-Unsubscribe=One-Click"}
