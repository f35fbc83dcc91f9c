"""A web farm on loopback: N generated company sites with the variety real scraping meets.

Each site lives under ``http://127.0.0.1:<port>/site-<n>/`` and its behaviour follows from ``n`` and
the farm's seed, so a run is reproducible and the expected outcome of every site is known:

- ``normal``: home page linking to imprint (Impressum), contact and about pages with e-mails/phones;
- ``slow``: every page answers after a delay;
- ``burst``: the first requests to the home page get 503, later ones succeed;
- ``hang``: the first requests to the home page do not answer within the scraper's read timeout
  (``persistent_hangs=True``: none ever does, which only a reconciler can heal);
- ``missing``: 404 home page; ``gone``: 410;
- ``redirect``: the site root redirects (301) to ``home``;
- ``oversized``: a home page far above the scraper's body cap;
- ``binary``: the home page is a PDF.

Any site can also be taken down for a while (``take_down``): it answers 503 until a moment on a
given clock (the embedded AWS's virtual clock), as a site that is down for half an hour would. And any
site's pages can be held (``hold``): each request waits, unanswered, until ``release``, so a test can
act while a scraper is known to be mid-fetch however slow the machine is.

Hostile kinds (``hostile_copies`` sites of each, numbered after the generated ones, so adding them
changes no other site's kind), each a way a site could crash, hang, exhaust or misdirect a scraper:

- ``gzip_bomb``: the home page is zeros compressed twice (``Content-Encoding: gzip, gzip``), about a
  kilobyte on the wire and :data:`GZIP_BOMB_BYTES` decompressed;
- ``nesting_bomb``: the home page ends in unclosed ``<div>`` s up to the scraper's body cap;
- ``bogus_charset``: pages declare ``charset=hex``, ``<meta charset="undefined">`` and ``rot13``;
- ``bracketed_links``: links such as ``http://[ccpa-preferences]`` and ``<base href="http://[x]/">``;
- ``sharp_s``: the site is listed as ``http://faß.test:<port>/site-<n>/``, a name that must be used in
  its IDNA 2008 form ``xn--fa-hia.test`` (which does not resolve), never as ``fass.test``;
- ``robots_disallowed``: the farm's ``/robots.txt`` disallows the site's path for every user agent.

Every request is counted per path (``hits``), the source of truth for "how many fetches happened".
"""

from __future__ import annotations

import gzip
import random
import re
import threading
import time
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

# (kind, share of the sites); the rest are normal.
DEFAULT_MIX: tuple[tuple[str, float], ...] = (
    ("slow", 0.05),
    ("burst", 0.05),
    ("hang", 0.01),
    ("missing", 0.03),
    ("gone", 0.01),
    ("redirect", 0.05),
    ("oversized", 0.01),
    ("binary", 0.02),
)
# Hostile kind -> the reason its task fails with (None: it finishes).
HOSTILE_KINDS: dict[str, str | None] = {
    "gzip_bomb": "unsupported_encoding",
    "nesting_bomb": None,
    "bogus_charset": None,
    "bracketed_links": None,
    "sharp_s": "dns_not_found",
    "robots_disallowed": "robots_disallowed",
}
GZIP_BOMB_BYTES = 512 * 1024 * 1024
NESTING_BOMB_BYTES = 2 * 1024 * 1024
FATAL_KINDS = {"missing", "gone", "binary", *(kind for kind, reason in HOSTILE_KINDS.items() if reason)}
_PATH = re.compile(r"^/site-(\d+)(/.*)?$")


@dataclass(frozen=True)
class Site:
    number: int
    kind: str
    name: str
    email: str
    phone: str
    language: str

    @property
    def expected_status(self) -> str:
        """The terminal status a correct scraper reaches for this site."""
        return "Failed" if self.kind in FATAL_KINDS else "Finished"


class WebFarm:
    """The HTTP server and the generated sites."""

    def __init__(
        self,
        sites: int,
        *,
        seed: int = 7,
        mix: tuple[tuple[str, float], ...] = DEFAULT_MIX,
        slow_seconds: float = 1.5,
        hang_seconds: float = 25.0,
        burst_failures: int = 2,
        oversized_bytes: int = 3 * 1024 * 1024,
        persistent_hangs: bool = False,
        hostile_copies: int = 0,
    ) -> None:
        rng = random.Random(seed)
        self.slow_seconds = slow_seconds
        self.hang_seconds = hang_seconds
        self.burst_failures = burst_failures
        self.persistent_hangs = persistent_hangs
        self.oversized_bytes = oversized_bytes
        self.sites: list[Site] = []
        for number in range(sites):
            roll, kind = rng.random(), "normal"
            cumulative = 0.0
            for candidate, share in mix:
                cumulative += share
                if roll < cumulative:
                    kind = candidate
                    break
            language = rng.choice(["de", "en", "ja"])
            name = f"Firma {number} GmbH" if language == "de" else f"Company {number} Ltd"
            self.sites.append(
                Site(
                    number,
                    kind,
                    name,
                    f"info@company-{number}.example",
                    f"+49 30 {1000000 + number}",
                    language,
                )
            )
        hostile = [kind for kind in HOSTILE_KINDS for _ in range(hostile_copies)]
        for number, kind in enumerate(hostile, start=sites):
            self.sites.append(
                Site(number, kind, f"Firma {number} GmbH", f"info@company-{number}.example", "", "de")
            )
        self._gzip_bomb: bytes | None = None
        self.hits: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._server: _QuietServer | None = None
        self._thread: threading.Thread | None = None
        self._release = threading.Event()
        self._outages: dict[int, tuple[float, Callable[[], float]]] = {}
        self._holds: dict[int, threading.Event] = {}

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self) -> WebFarm:
        farm = self

        class Handler(_SiteHandler):
            owner: ClassVar[WebFarm] = farm

        server = _QuietServer(("127.0.0.1", 0), Handler)
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, name="webfarm", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._release.set()
        self.release()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> WebFarm:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "start the farm first"
        return int(self._server.server_address[1])

    def url(self, number: int) -> str:
        if self.sites[number].kind == "sharp_s":
            return f"http://faß.test:{self.port}/site-{number}/"
        return f"http://127.0.0.1:{self.port}/site-{number}/"

    def urls(self) -> list[str]:
        return [self.url(site.number) for site in self.sites]

    def site_hits(self, number: int) -> int:
        prefix = f"/site-{number}/"
        with self._lock:
            return sum(count for path, count in self.hits.items() if path.startswith(prefix))

    def take_down(self, number: int, *, until: float, clock: Callable[[], float]) -> None:
        """Site ``number`` answers 503 to every request until ``clock()`` reaches ``until``."""
        with self._lock:
            self._outages[number] = (until, clock)

    def hold(self, numbers: list[int]) -> None:
        """Requests to these sites wait, unanswered, until ``release`` (or the farm stops)."""
        with self._lock:
            for number in numbers:
                self._holds.setdefault(number, threading.Event())

    def release(self) -> None:
        """Answer every held request, and hold no site any more."""
        with self._lock:
            holds, self._holds = self._holds, {}
        for event in holds.values():
            event.set()

    def wait_if_held(self, number: int) -> None:
        with self._lock:
            held = self._holds.get(number)
        if held is not None:
            held.wait()

    def is_down(self, number: int) -> bool:
        with self._lock:
            outage = self._outages.get(number)
        return outage is not None and outage[1]() < outage[0]

    def count(self, path: str) -> int:
        with self._lock:
            self.hits[path] += 1
            return self.hits[path]

    # -- pages -----------------------------------------------------------------------------------
    def page(self, site: Site, page: str) -> tuple[int, str, bytes, dict[str, str]]:
        """(status, content type, body, extra headers) for ``page`` of ``site``."""
        base = f"/site-{site.number}/"
        html = "text/html; charset=utf-8"
        if site.kind in HOSTILE_KINDS:
            hostile = self._hostile_page(site, page)
            if hostile is not None:
                return hostile
        if page in ("", "home"):
            if site.kind == "redirect" and page == "":
                return 301, html, b"", {"Location": base + "home"}
            if site.kind == "missing":
                return 404, html, b"<h1>Not found</h1>", {}
            if site.kind == "gone":
                return 410, html, b"<h1>Gone</h1>", {}
            if site.kind == "binary":
                return 200, "application/pdf", b"%PDF-1.4\n" + bytes(range(256)) * 40, {}
            if site.kind == "oversized":
                filler = ("<p>" + "Lorem ipsum dolor sit amet. " * 40 + "</p>\n").encode()
                body = (
                    b"<html><body>" + filler * (self.oversized_bytes // len(filler) + 1) + b"</body></html>"
                )
                return 200, html, body, {}
            links = (
                f'<a href="{base}impressum">Impressum</a> <a href="{base}kontakt">Kontakt</a> '
                f'<a href="{base}about">About us</a> <a href="https://www.linkedin.com/company/c{site.number}">'
                "LinkedIn</a>"
            )
            return 200, html, self._document(site, "Home", f"<p>Welcome to {site.name}.</p>{links}"), {}
        if page == "impressum":
            text = (
                f"<p>{site.name}, Musterstr. {site.number}, Berlin. "
                f"E-Mail: {site.email} Tel: {site.phone}</p>"
            )
            return 200, html, self._document(site, "Impressum", text), {}
        if page == "kontakt":
            text = (
                f'<p>Write to <a href="mailto:{site.email}">{site.email}</a> '
                f"or sales@company-{site.number}.example</p>"
            )
            return 200, html, self._document(site, "Kontakt", text), {}
        if page == "about":
            return (
                200,
                html,
                self._document(
                    site, "About", f"<p>{site.name} makes things since 19{site.number % 100:02d}.</p>"
                ),
                {},
            )
        return 404, html, b"<h1>Not found</h1>", {}

    def robots_txt(self) -> bytes:
        """The farm's one /robots.txt: the paths of the ``robots_disallowed`` sites, for every agent."""
        lines = ["User-agent: *"]
        lines += [f"Disallow: /site-{s.number}/" for s in self.sites if s.kind == "robots_disallowed"]
        return ("\n".join(lines) + "\n").encode()

    def _hostile_page(self, site: Site, page: str) -> tuple[int, str, bytes, dict[str, str]] | None:
        """The hostile part of a hostile site, or None where it serves the normal page."""
        base = f"/site-{site.number}/"
        html = "text/html; charset=utf-8"
        home = page in ("", "home")
        if site.kind == "gzip_bomb" and home:
            return 200, html, self.gzip_bomb(), {"Content-Encoding": "gzip, gzip"}
        if site.kind == "nesting_bomb" and home:
            head = self._document(
                site, "Home", f'<p>Welcome to {site.name}.</p><a href="{base}impressum">I</a>'
            )
            return 200, html, head[: -len(b"</body></html>")] + b"<div>" * (NESTING_BOMB_BYTES // 5), {}
        if site.kind == "bogus_charset":
            charset = {"": "hex", "home": "hex", "kontakt": "rot13"}.get(page)
            status, _, body, headers = self.page(_plain(site), page)
            if page == "impressum":
                body = body.replace(b"<head>", b'<head><meta charset="undefined">')
            return status, f"text/html; charset={charset}" if charset else html, body, headers
        if site.kind == "bracketed_links" and home:
            links = (
                '<base href="http://[x]/"><a href="http://[ccpa-preferences]">Do not sell</a> '
                f'<a href="https://[domain]/impressum">Impressum</a> <a href="{base}impressum">Impressum</a>'
            )
            return 200, html, self._document(site, "Home", f"<p>Welcome to {site.name}.</p>{links}"), {}
        return None

    def gzip_bomb(self) -> bytes:
        """:data:`GZIP_BOMB_BYTES` zeros gzip-compressed twice, built once without holding them."""
        if self._gzip_bomb is None:
            compressor = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
            block = bytes(1024 * 1024)
            inner = b"".join(compressor.compress(block) for _ in range(GZIP_BOMB_BYTES // len(block)))
            self._gzip_bomb = gzip.compress(inner + compressor.flush(), 9)
        return self._gzip_bomb

    @staticmethod
    def _document(site: Site, title: str, body: str) -> bytes:
        return (
            f'<!doctype html><html lang="{site.language}"><head><title>{site.name} - {title}</title>'
            f'<meta name="description" content="{site.name}: {title}"></head><body>{body}</body></html>'
        ).encode()


def _plain(site: Site) -> Site:
    """The same site as a normal one (the hostile kinds that only change parts of normal pages)."""
    return Site(site.number, "normal", site.name, site.email, site.phone, site.language)


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        """Clients that give up (timeouts, body caps) reset connections; that is expected here."""
        return None


class _SiteHandler(BaseHTTPRequestHandler):
    owner: ClassVar[WebFarm]
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        return None

    def do_GET(self) -> None:
        farm = self.owner
        path = self.path.split("?", 1)[0]
        hit = farm.count(path)
        if path == "/robots.txt":
            self._send(200, "text/plain", farm.robots_txt(), {})
            return
        match = _PATH.match(path)
        if match is None or int(match.group(1)) >= len(farm.sites):
            self._send(404, "text/html", b"<h1>No such site</h1>", {})
            return
        site = farm.sites[int(match.group(1))]
        page = (match.group(2) or "/").strip("/")
        farm.wait_if_held(site.number)
        if farm.is_down(site.number):
            self._send(503, "text/html", b"<h1>Down for maintenance</h1>", {})
            return
        if site.kind == "slow":
            time.sleep(farm.slow_seconds)
        if (
            site.kind == "hang"
            and page in ("", "home")
            and (farm.persistent_hangs or hit <= farm.burst_failures)
        ):
            farm._release.wait(farm.hang_seconds)
        if site.kind == "burst" and page in ("", "home") and hit <= farm.burst_failures:
            self._send(503, "text/html", b"<h1>Service unavailable</h1>", {"Retry-After": "1"})
            return
        status, content_type, body, headers = farm.page(site, page)
        self._send(status, content_type, body, headers)

    def _send(self, status: int, content_type: str, body: bytes, headers: dict[str, str]) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            return
