"""One page GET that only ever connects to checked public addresses.

Each hop of a redirect chain is validated (http/https only), resolved and checked by the address
guard, and fetched over a connection pinned to the checked IP: the request URL names the IP, the
Host header and the TLS SNI name carry the host name, and the certificate is verified against the
host name. Redirects are followed by hand (at most ``max_redirects``, never more than 5) so every hop
is checked before anything connects to it.

Outcome classification (the caller decides what it means for an extra page):

==========================================  =========================================================
outcome                                     result
==========================================  =========================================================
invalid URL, non-http(s) scheme             ``FatalScrapeError("invalid_url")``
blocked address (any hop)                   ``FatalScrapeError("blocked_address")``
host name does not exist                    ``FatalScrapeError("dns_not_found")``
temporary DNS failure                       retried, then ``RetryableScrapeError``
connect error, timeout, reset, 5xx,         retried, then ``RetryableFetchError`` (a
408, 425, 429                               ``RetryableScrapeError``)
certificate does not verify                 ``FatalScrapeError("tls_certificate")``
other 4xx (404, 410, 403, ...)              ``FatalScrapeError("http_<code>")``, fetched once
other non-2xx non-redirect status           ``FatalScrapeError("http_<code>")``
redirect without usable Location            ``FatalScrapeError("invalid_redirect")``
more than ``max_redirects`` redirects       ``FatalScrapeError("too_many_redirects")``
2xx with a non-HTML Content-Type            ``FatalScrapeError("not_html")``, body not downloaded
2xx without Content-Type, not HTML-looking  ``FatalScrapeError("not_html")``
body larger than ``max_body_bytes``         success: the first ``max_body_bytes``, ``truncated=True``
stacked or unrequested Content-Encoding     ``FatalScrapeError("unsupported_encoding")``
corrupt compressed body                     retried, then ``RetryableFetchError("decoding_error")``
name resolution slower than allowed         retried, then ``RetryableFetchError("dns_timeout")``
==========================================  =========================================================

An oversized page is kept, not failed: the first megabytes of a company page hold everything the
extractor looks for, and failing would turn a usable site into a permanent failure. The cap counts
decoded bytes while they are decoded (:mod:`outreach.scraping.body_decoder`), so a page that
compresses well cannot expand past the cap in memory either.

Each URL is attempted at most ``attempts_per_url`` times (never more than 3), with exponential
backoff and jitter between attempts, only for retryable outcomes, and never past the deadline. A
``Retry-After`` longer than :data:`MAX_RETRY_AFTER_SECONDS` ends the attempts at once: the queue's
own retry comes back much later. Every network operation is bounded by the deadline (see
:mod:`outreach.scraping.pinned_transport`), and so is name resolution: the resolver runs in a
helper thread that is waited for at most the connect timeout, never past the deadline (a resolver
call cannot be interrupted; an abandoned one finishes in the background).
"""

from __future__ import annotations

import functools
import random
import socket
import ssl
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import certifi
import httpx

from outreach.config import ScrapeSettings
from outreach.errors import (
    BadCompressedBodyError,
    FatalScrapeError,
    RetryableFetchError,
    RetryableScrapeError,
)
from outreach.scraping.address_guard import Resolver, check_host
from outreach.scraping.body_decoder import ACCEPT_ENCODING, content_coding, read_capped
from outreach.scraping.charset import content_type_parts, looks_like_html
from outreach.scraping.pinned_transport import PinnedTransport
from outreach.scraping.site_urls import HttpTarget, join_http_url, parse_http_url

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
RETRYABLE_CLIENT_STATUSES = frozenset({408, 425, 429})
HTML_MEDIA_TYPES = frozenset({"text/html", "application/xhtml+xml"})
ACCEPT = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1"

MAX_REDIRECTS = 5
MAX_ATTEMPTS = 3
BACKOFF_BASE_SECONDS = 0.5
BACKOFF_MAX_SECONDS = 8.0
MAX_RETRY_AFTER_SECONDS = 10.0
# An attempt that cannot get at least this much time is not started.
MIN_ATTEMPT_SECONDS = 0.05


@dataclass(frozen=True)
class FetchedPage:
    """A successful HTML response. ``url`` is the final URL (host name form) after redirects."""

    url: str
    status: int
    media_type: str
    charset: str | None
    body: bytes
    truncated: bool
    redirects: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Redirect:
    location: str


def fetch_page(
    url: str,
    *,
    deadline: float,
    settings: ScrapeSettings,
    resolver: Resolver | None = None,
    ssl_context: ssl.SSLContext | None = None,
    backoff_base_seconds: float = BACKOFF_BASE_SECONDS,
    sleep: Callable[[float], None] = time.sleep,
    any_media_type: bool = False,
) -> FetchedPage:
    """GET ``url`` following redirects by hand; raise per the classification table above.

    ``deadline`` is a :func:`time.monotonic` value. ``ssl_context`` replaces the certifi trust store
    (tests with their own certificate authority). ``any_media_type`` accepts a body of any type
    (robots.txt) instead of HTML only.
    """
    fetcher = _Fetcher(
        deadline=deadline,
        settings=settings,
        resolver=resolver,
        ssl_context=ssl_context or default_ssl_context(),
        backoff_base_seconds=backoff_base_seconds,
        sleep=sleep,
        any_media_type=any_media_type,
    )
    return fetcher.fetch(parse_http_url(url))


@functools.cache
def default_ssl_context() -> ssl.SSLContext:
    """Certificate verification against the certifi bundle, host names checked."""
    return ssl.create_default_context(cafile=certifi.where())


class _Fetcher:
    def __init__(
        self,
        *,
        deadline: float,
        settings: ScrapeSettings,
        resolver: Resolver | None,
        ssl_context: ssl.SSLContext,
        backoff_base_seconds: float,
        sleep: Callable[[float], None],
        any_media_type: bool,
    ) -> None:
        self._deadline = deadline
        self._settings = settings
        self._resolver = resolver or socket.getaddrinfo
        self._any_media_type = any_media_type
        self._ssl_context = ssl_context
        self._backoff_base = backoff_base_seconds
        self._sleep = sleep
        self._attempts = max(1, min(settings.attempts_per_url, MAX_ATTEMPTS))
        self._max_redirects = max(0, min(settings.max_redirects, MAX_REDIRECTS))

    def fetch(self, target: HttpTarget) -> FetchedPage:
        hops: list[str] = []
        while True:
            outcome = self._with_retries(target)
            if isinstance(outcome, FetchedPage):
                return FetchedPage(
                    url=outcome.url,
                    status=outcome.status,
                    media_type=outcome.media_type,
                    charset=outcome.charset,
                    body=outcome.body,
                    truncated=outcome.truncated,
                    redirects=tuple(hops),
                )
            if len(hops) >= self._max_redirects:
                first = hops[0] if hops else str(target)
                raise FatalScrapeError(
                    "too_many_redirects", f"more than {self._max_redirects} redirects from {first}"
                )
            hops.append(str(target))
            target = join_http_url(target, outcome.location, reason="invalid_redirect")

    def _with_retries(self, target: HttpTarget) -> FetchedPage | _Redirect:
        for attempt in range(1, self._attempts + 1):
            if self._remaining() < MIN_ATTEMPT_SECONDS:
                raise RetryableFetchError("deadline_exceeded", f"no time left to fetch {target}")
            try:
                return self._fetch_once(target)
            except RetryableScrapeError as exc:
                if attempt == self._attempts:
                    raise
                delay = self._delay_before_next(attempt, exc)
                if delay is None or self._remaining() < delay + MIN_ATTEMPT_SECONDS:
                    raise
                self._sleep(delay)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _delay_before_next(self, attempt: int, exc: RetryableScrapeError) -> float | None:
        backoff = min(BACKOFF_MAX_SECONDS, self._backoff_base * 2.0 ** (attempt - 1))
        delay = backoff * random.uniform(0.5, 1.0)
        retry_after = exc.retry_after
        if retry_after is not None:
            if retry_after > MAX_RETRY_AFTER_SECONDS:
                return None
            delay = max(delay, retry_after)
        return delay

    def _remaining(self) -> float:
        return self._deadline - time.monotonic()

    def _bounded_resolver(
        self, host: str, port: int, /, *, type: int
    ) -> Sequence[tuple[Any, Any, Any, Any, tuple[Any, ...]]]:
        """The resolver's answer, waited for at most the connect timeout and never past the deadline."""
        wait = min(self._settings.connect_timeout, self._remaining())
        return resolve_within(self._resolver, host, port, type=type, seconds=wait)

    def _fetch_once(self, target: HttpTarget) -> FetchedPage | _Redirect:
        address = check_host(
            target.host,
            target.port,
            allow_loopback=self._settings.allow_loopback,
            resolver=self._bounded_resolver,
        )
        request_url = target.url.copy_with(host=address)
        headers = {
            "Host": target.host_header,
            "User-Agent": self._settings.user_agent,
            "Accept": ACCEPT,
            "Accept-Encoding": ACCEPT_ENCODING,
        }
        timeout = httpx.Timeout(
            connect=self._settings.connect_timeout,
            read=self._settings.read_timeout,
            write=self._settings.read_timeout,
            pool=self._settings.connect_timeout,
        )
        extensions: dict[str, object] = {"timeout": timeout.as_dict()}
        if target.scheme == "https":
            extensions["sni_hostname"] = target.host
        request = httpx.Request("GET", request_url, headers=headers, extensions=extensions)
        # The transport is used directly, without httpx.Client: the client would interpret a
        # redirect's Location itself, and the fetcher must be the only one to look at it.
        transport = PinnedTransport(address=address, deadline=self._deadline, ssl_context=self._ssl_context)
        try:
            with transport:
                response = transport.handle_request(request)
                response.request = request
                try:
                    return self._read(target, response)
                finally:
                    response.close()
        except httpx.TimeoutException as exc:
            raise RetryableFetchError("timeout", f"{target}: {type(exc).__name__}") from exc
        except httpx.ConnectError as exc:
            verification = _certificate_error(exc)
            if verification is not None:
                raise FatalScrapeError("tls_certificate", f"{target.host}: {verification}") from exc
            raise RetryableFetchError("connect_error", f"{target}: {exc}") from exc
        except (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError) as exc:
            raise RetryableFetchError("connection_error", f"{target}: {type(exc).__name__}: {exc}") from exc
        except (httpx.DecodingError, BadCompressedBodyError) as exc:
            raise RetryableFetchError("decoding_error", f"{target}: {exc}") from exc

    def _read(self, target: HttpTarget, response: httpx.Response) -> FetchedPage | _Redirect:
        status = response.status_code
        if status in REDIRECT_STATUSES:
            location = response.headers.get("location")
            if not location:
                raise FatalScrapeError("invalid_redirect", f"{status} from {target} without Location")
            return _Redirect(location)
        if status >= 500 or status in RETRYABLE_CLIENT_STATUSES:
            raise RetryableFetchError(
                f"http_{status}", str(target), retry_after=_retry_after(response.headers.get("retry-after"))
            )
        if not 200 <= status < 300:
            raise FatalScrapeError(f"http_{status}", str(target))
        media_type, charset = content_type_parts(response.headers.get("content-type"))
        if media_type and media_type not in HTML_MEDIA_TYPES and not self._any_media_type:
            raise FatalScrapeError("not_html", f"{target}: {media_type}")
        coding = content_coding(response.headers.get("content-encoding"))
        body, truncated = read_capped(response.iter_raw(), coding, self._settings.max_body_bytes)
        if not media_type and not self._any_media_type and not looks_like_html(body):
            raise FatalScrapeError("not_html", f"{target}: no Content-Type and not HTML")
        return FetchedPage(
            url=str(target),
            status=status,
            media_type=media_type or "text/html",
            charset=charset,
            body=body,
            truncated=truncated,
        )


def resolve_within(
    resolver: Resolver, host: str, port: int, *, type: int, seconds: float
) -> Sequence[tuple[Any, Any, Any, Any, tuple[Any, ...]]]:
    """``resolver(host, port, type=type)`` in a helper thread, waited for at most ``seconds``.

    Raises ``RetryableFetchError("dns_timeout")`` when no answer came in time; the resolver's own
    errors are raised as they are.
    """
    answer: list[Sequence[tuple[Any, Any, Any, Any, tuple[Any, ...]]]] = []
    failure: list[BaseException] = []
    done = threading.Event()

    def run() -> None:
        try:
            answer.append(resolver(host, port, type=type))
        except BaseException as exc:  # noqa: BLE001 - outcome: handed to the waiting caller, raised there
            failure.append(exc)
        finally:
            done.set()

    threading.Thread(target=run, name=f"resolve-{host[:40]}", daemon=True).start()
    if not done.wait(max(0.0, seconds)):
        raise RetryableFetchError("dns_timeout", f"{host}: no answer within {seconds:.1f} s")
    if failure:
        raise failure[0]
    return answer[0]


def _retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After: <seconds>`` header; HTTP dates are ignored (backoff applies)."""
    if value is None or not value.strip().isdigit():
        return None
    return float(int(value.strip()))


def _certificate_error(exc: BaseException) -> str | None:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ssl.SSLCertVerificationError):
            return current.verify_message or str(current)
        current = current.__cause__ or current.__context__
    return None
