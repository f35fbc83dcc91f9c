"""An httpx transport that can reach one checked address only, and no later than a deadline.

The URL handed to httpx already names the checked IP; this transport is the second lock: its network
backend refuses a TCP connection to any other host, and clamps every connect, TLS handshake, read
and write to the time left before the deadline, so a slow server cannot hold a fetch past it.
"""

from __future__ import annotations

import ipaddress
import ssl
import time
from collections.abc import Iterable
from typing import Any

import httpcore
import httpx


class _DeadlineClock:
    def __init__(self, deadline: float) -> None:
        self._deadline = deadline

    def bound(self, timeout: float | None, expired: type[Exception]) -> float:
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise expired("the fetch deadline has passed")
        return remaining if timeout is None else min(timeout, remaining)


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream, clock: _DeadlineClock) -> None:
        self._inner = inner
        self._clock = clock

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, self._clock.bound(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._clock.bound(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        bounded = self._clock.bound(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname, bounded), self._clock)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class PinnedBackend(httpcore.NetworkBackend):
    """Opens TCP connections to ``address`` only, each operation bounded by ``deadline``."""

    def __init__(self, address: str, deadline: float) -> None:
        self._address = ipaddress.ip_address(address)
        self._clock = _DeadlineClock(deadline)
        self._inner = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        try:
            requested = ipaddress.ip_address(host.strip("[]"))
        except ValueError:  # outcome: a host name, not an address; compared below and refused
            requested = None
        if requested != self._address:
            raise httpcore.ConnectError(
                f"refusing {host}: only the checked address {self._address} is allowed"
            )
        bounded = self._clock.bound(timeout, httpcore.ConnectTimeout)
        stream = self._inner.connect_tcp(host, port, bounded, local_address, socket_options)
        return _DeadlineStream(stream, self._clock)

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("unix sockets are never used by the scraper")


class PinnedTransport(httpx.HTTPTransport):
    """``httpx.HTTPTransport`` whose connection pool uses :class:`PinnedBackend` (no proxies, no env)."""

    def __init__(self, *, address: str, deadline: float, ssl_context: ssl.SSLContext) -> None:
        super().__init__(verify=ssl_context, trust_env=False, retries=0)
        self._pool = httpcore.ConnectionPool(
            ssl_context=ssl_context,
            max_connections=1,
            max_keepalive_connections=0,
            http1=True,
            http2=False,
            retries=0,
            network_backend=PinnedBackend(address, deadline),
        )
