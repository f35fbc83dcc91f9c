"""The applied Lambda function URLs, each served on its own loopback HTTP port.

On AWS a function URL (``https://<url-id>.lambda-url.<region>.on.aws/``) turns each HTTP request into
a synchronous invocation of its function and the function's answer into the HTTP response
(https://docs.aws.amazon.com/lambda/latest/dg/urls-invocation.html). Here ``FunctionUrlHost`` lists
the URL configurations on the emulator (ListFunctions, then ListFunctionUrlConfigs per function, each
``refresh``), serves each one on ``http://127.0.0.1:<port>/`` (a free port, kept while the URL
exists, whatever its configuration becomes) and stops serving a deleted one. Each request:

1. a body over 6 MB (Content-Length) is refused with 413 before it is read;
2. the resource policy is read (GetPolicy) and must let an anonymous caller invoke through the URL
   (``function_url_access``): 403 otherwise;
3. the request becomes the payload format 2.0 event (``function_url_payloads``; 413 past 6 MB);
4. the function runs synchronously in the emulator's runtime (``FunctionRuntime.invoke``: a worker
   process, its timeout, reserved concurrency) on the virtual clock;
5. its answer becomes the HTTP response. A function error, timeout or crash, or an answer that is
   not a valid response, is 502; a throttle (reserved concurrency in use) is 429, as Lambda's
   ``TooManyRequestsException``
   (https://docs.aws.amazon.com/lambda/latest/dg/services-apigateway-errors.html gives the same
   statuses for the same payload format behind API Gateway).

The journal gets one ``url.request`` entry per request: function, method, path, status and virtual
time; never the query string or body, which may carry an address.
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from embedded_aws.base import Journal, client
from embedded_aws.clock import VirtualClock
from embedded_aws.errors import FunctionNotFoundError, ThrottledError, UnknownFunctionUrlError
from embedded_aws.function_url_access import FORBIDDEN, anonymous_may_invoke
from embedded_aws.function_url_payloads import (
    MAX_PAYLOAD_BYTES,
    MalformedResponseError,
    PayloadTooLargeError,
    UrlEndpoint,
    UrlRequest,
    UrlResponse,
    http_response,
    request_event,
)
from embedded_aws.runtime import FunctionRuntime

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
READ_TIMEOUT_REAL_SECONDS = 30.0
DISCARD_LIMIT_BYTES = 64 * 1024 * 1024  # past this a refused body is not read: the connection closes


@dataclass(frozen=True)
class UrlConfig:
    """One applied URL configuration, as ListFunctionUrlConfigs returns it."""

    function_url: str
    function_arn: str
    auth_type: str

    @property
    def endpoint(self) -> UrlEndpoint:
        domain = urlsplit(self.function_url).netloc
        return UrlEndpoint(url_id=domain.split(".", 1)[0], domain=domain, auth_type=self.auth_type)

    @classmethod
    def from_api(cls, config: dict[str, Any]) -> UrlConfig:
        return cls(config["FunctionUrl"], config["FunctionArn"], config["AuthType"])


def _key(url: str) -> str:
    """A function URL's identity: its scheme and host, whatever path or query follow."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


class _Served:
    """One URL's loopback server and the configuration it answers with (replaced in place)."""

    def __init__(self, host: FunctionUrlHost, config: UrlConfig) -> None:
        self.host = host
        self.config = config
        served = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = READ_TIMEOUT_REAL_SECONDS

            def _handle(self) -> None:
                served.handle(self)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _handle

            def log_message(self, format: str, *args: Any) -> None:
                return None  # requests go to the journal, without their query strings

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = int(self.server.server_address[1])
        self.thread = threading.Thread(
            target=self.server.serve_forever, name=f"function-url-{self.port}", daemon=True
        )
        self.thread.start()

    @property
    def loopback(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)

    # -- one request -------------------------------------------------------------------------------
    def handle(self, request: BaseHTTPRequestHandler) -> None:
        config = self.config
        length = request.headers.get("Content-Length")
        if length is not None and (not length.isdigit() or int(length) > MAX_PAYLOAD_BYTES):
            request.close_connection = True
            _discard(request, int(length) if length.isdigit() else 0)
            response = _too_large()
        else:
            body = _read_body(request, int(length or 0))
            if body is None:
                request.close_connection = True
                response = _too_large()
            else:
                incoming = UrlRequest(
                    method=request.command,
                    target=request.path,
                    headers=list(request.headers.items()),
                    body=body,
                    source_ip=request.client_address[0],
                    protocol=request.request_version,
                )
                response = self.host.answer(config, incoming)
        self.host.journal.record(
            "url.request",
            function=config.function_arn.split(":")[6],
            method=request.command,
            path=urlsplit(request.path).path,
            status=response.status,
            at=self.host.clock.now(),
        )
        _write(request, response)


def _too_large() -> UrlResponse:
    return UrlResponse.message(413, f"Request must be smaller than {MAX_PAYLOAD_BYTES} bytes")


def _discard(request: BaseHTTPRequestHandler, length: int) -> None:
    """Read and drop a refused body (up to a bound), so the client gets to read the 413."""
    left = min(length, DISCARD_LIMIT_BYTES)
    while left > 0:
        chunk = request.rfile.read(min(left, 1 << 20))
        if not chunk:
            return
        left -= len(chunk)


def _read_body(request: BaseHTTPRequestHandler, length: int) -> bytes | None:
    """The request body (Content-Length or chunked); None when it grows past the payload limit."""
    if request.headers.get("Transfer-Encoding", "").lower() != "chunked":
        return request.rfile.read(length) if length else b""
    chunks: list[bytes] = []
    total = 0
    while True:
        size = int(request.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
        if size == 0:
            while request.rfile.readline() not in (b"\r\n", b"\n", b""):
                pass  # trailer fields
            return b"".join(chunks)
        total += size
        if total > MAX_PAYLOAD_BYTES:
            return None
        chunks.append(request.rfile.read(size))
        request.rfile.readline()


def _write(request: BaseHTTPRequestHandler, response: UrlResponse) -> None:
    request.send_response(response.status)
    for name, value in response.headers:
        if name not in ("content-length", "connection", "transfer-encoding"):
            request.send_header(name, value)
    request.send_header("content-length", str(len(response.body)))
    request.end_headers()
    if request.command != "HEAD":
        request.wfile.write(response.body)


class FunctionUrlHost:
    """Serves every function URL configured on the emulator on a loopback port of its own."""

    def __init__(
        self,
        runtime: FunctionRuntime,
        clock: VirtualClock,
        endpoint: str,
        *,
        region: str = "us-east-1",
        journal: Journal | None = None,
    ) -> None:
        self.runtime = runtime
        self.clock = clock
        self.region = region
        self.journal = journal or Journal()
        self._lambda = client("lambda", endpoint, region)
        self._served: dict[str, _Served] = {}
        self._lock = threading.Lock()
        # One refresh at a time: a slower one's older listing must not stop a URL a newer one started.
        self._refreshing = threading.Lock()

    # -- discovery -------------------------------------------------------------------------------
    def applied(self) -> list[UrlConfig]:
        """Every URL configuration on the emulator."""
        configs: list[UrlConfig] = []
        for page in self._lambda.get_paginator("list_functions").paginate():
            for function in page.get("Functions", []):
                try:
                    listed = self._lambda.get_paginator("list_function_url_configs").paginate(
                        FunctionName=function["FunctionName"]
                    )
                    configs.extend(
                        UrlConfig.from_api(c) for p in listed for c in p.get("FunctionUrlConfigs", [])
                    )
                except self._lambda.exceptions.ResourceNotFoundException:  # outcome: deleted meanwhile
                    continue
        return configs

    def refresh(self) -> None:
        """Serve the URLs configured now: start new ones, update changed ones, stop deleted ones."""
        with self._refreshing:
            wanted = {_key(c.function_url): c for c in self.applied()}
            with self._lock:
                gone = [self._served.pop(k) for k in list(self._served) if k not in wanted]
                for key, config in wanted.items():
                    served = self._served.get(key)
                    if served is None:
                        self._served[key] = _Served(self, config)
                        self.journal.record("url.started", url=key, port=self._served[key].port)
                    elif served.config != config:
                        served.config = config
            for entry in gone:
                entry.stop()
                self.journal.record("url.stopped", url=_key(entry.config.function_url))

    def stop(self) -> None:
        with self._lock:
            served, self._served = list(self._served.values()), {}
        for entry in served:
            entry.stop()

    # -- addresses -------------------------------------------------------------------------------
    def loopback_url(self, url: str) -> str:
        """The loopback address of an applied URL (``https://<url-id>.lambda-url.<region>.on.aws/``),
        with the same path and query. Raises ``UnknownFunctionUrlError`` for a URL not applied."""
        with self._lock:
            served = self._served.get(_key(url))
        if served is None:
            self.refresh()
            with self._lock:
                served = self._served.get(_key(url))
        if served is None:
            raise UnknownFunctionUrlError(url)
        parts = urlsplit(url)
        suffix = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        return served.loopback.rstrip("/") + suffix

    def function_url(self, function: str) -> str:
        """The applied URL (AWS's form) of the function named ``function`` (name or ARN)."""
        name = function.split(":")[6] if function.startswith("arn:") else function
        with self._lock:
            urls = [s.config.function_url for s in self._served.values()]
            arns = [s.config.function_arn for s in self._served.values()]
        for url, arn in zip(urls, arns, strict=True):
            if arn.split(":")[6] == name:
                return url
        raise UnknownFunctionUrlError(function)

    # -- answering -------------------------------------------------------------------------------
    def _policy(self, function_arn: str) -> str | None:
        try:
            return str(self._lambda.get_policy(FunctionName=function_arn)["Policy"])
        except self._lambda.exceptions.ResourceNotFoundException:  # outcome: no policy grants nothing
            return None

    def answer(self, config: UrlConfig, request: UrlRequest) -> UrlResponse:
        """The URL's response to ``request``: refused, or the function's answer."""
        if not anonymous_may_invoke(self._policy(config.function_arn), config.function_arn, config.auth_type):
            return UrlResponse.message(403, FORBIDDEN)
        try:
            event = request_event(
                request,
                config.endpoint,
                account_id=config.function_arn.split(":")[4],
                now=self.clock.now(),
                request_id=str(uuid.uuid4()),
            )
        except PayloadTooLargeError as exc:  # outcome: Lambda refuses the invocation, 413
            return UrlResponse.message(413, str(exc))
        try:
            result = self.runtime.invoke(config.function_arn, event)
        except ThrottledError:  # outcome: Lambda's 429, the function did not run
            return UrlResponse.message(429, "Rate Exceeded.")
        except FunctionNotFoundError:  # outcome: the function is gone with its URL
            return UrlResponse.message(404, "Not Found")
        if not result.ok:
            self.journal.record(
                "url.function_error",
                function=config.function_arn,
                error_type=result.error_type,
                error_message=result.error_message,
            )
            return UrlResponse.message(502, "Internal Server Error")
        try:
            return http_response(result.payload)
        except MalformedResponseError as exc:  # outcome: an answer the URL cannot send, 502
            self.journal.record("url.malformed_response", function=config.function_arn, error=str(exc))
            return UrlResponse.message(502, "Internal Server Error")
