"""A site's extra pages fetched at once: at most ``connections`` in flight, each answer taken in order.

:class:`PageFetches` runs the fetch it is given (:func:`outreach.scraping.safe_fetch.fetch_page`
bound to the task's settings, resolver and deadline) in up to ``connections`` worker threads. Each
fetch is the same as one made alone: its own resolution and address check, its own transport pinned
to the checked address (one connection, closed after the request: nothing is shared between
threads but the read-only TLS context and settings), the same size, time and redirect limits, and
the invocation's one deadline. At most ``connections`` requests of one scrape are in flight at once,
so no host (the site's, its parent domain's, a redirect's) gets more; the home page and robots.txt
are fetched before any extra page starts, so they never add to them.

Answers are taken in the order the fetches were started, whatever order they arrive in, so the crawl
records and merges pages exactly as it would fetching them one after another (``connections=1``
does that). A fetch still queued when less than ``min_seconds`` remain before the deadline is not
started; its answer is ``None``. :meth:`StartedFetch.result` raises what the fetch raised, classified
errors and unknown ones alike, in the caller's thread; leaving the ``with`` block cancels fetches not
started and waits for the running ones, which the deadline bounds.

The threads wait on the network, not the CPU (a 1,536 MB function has less than one vCPU,
https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html); with each fetch's resolver
thread and socket they stay far below Lambda's 1,024 processes/threads and 1,024 file descriptors
per execution environment (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType

from outreach.scraping.safe_fetch import FetchedPage

# (URL) -> its page; raises as fetch_page does.
PageFetch = Callable[[str], FetchedPage]


class StartedFetch:
    """One fetch handed to the workers; :meth:`result` waits for it."""

    def __init__(self, url: str, future: Future[FetchedPage | None]) -> None:
        self.url = url
        self._future = future

    def result(self) -> FetchedPage | None:
        """The page, ``None`` if the deadline came before it could start; raises what the fetch raised."""
        return self._future.result()


class PageFetches:
    """Up to ``connections`` fetches at a time, none started within ``min_seconds`` of ``deadline``."""

    def __init__(self, fetch: PageFetch, *, connections: int, deadline: float, min_seconds: float) -> None:
        self._fetch = fetch
        self._deadline = deadline
        self._min_seconds = min_seconds
        self._workers = ThreadPoolExecutor(max_workers=max(1, connections), thread_name_prefix="page-fetch")

    def start(self, url: str) -> StartedFetch:
        return StartedFetch(url, self._workers.submit(self._fetch_if_time_left, url))

    def _fetch_if_time_left(self, url: str) -> FetchedPage | None:
        if self._deadline - time.monotonic() < self._min_seconds:
            return None
        return self._fetch(url)

    def __enter__(self) -> PageFetches:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._workers.shutdown(wait=True, cancel_futures=True)
