"""A one-click unsubscribe request as a mail provider makes it: a 5xx answer is tried again.

The endpoint's contract (functions/outreach/unsubscribe/endpoint.py): a failure answers 5xx, the
provider or the person tries again, and the recorded stop is idempotent, so the retry completes it
(RFC 8058 asks nothing more of the sender). On the embedded AWS's fast clock a loaded machine can run
an invocation past the function's timeout (10 virtual seconds are 1 s of wall time at clock x10), so
`make local` and the e2e request the way a provider does and report how often they had to.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from dataclasses import dataclass, field

# How many times a provider's request is made before the answer counts (the first and two retries).
PROVIDER_ATTEMPTS = 3


@dataclass(frozen=True)
class Answer:
    """The last answer (status and page) and the 5xx answers before it."""

    status: int
    page: str
    failed: list[tuple[int, str]] = field(default_factory=list)

    @property
    def retries(self) -> int:
        return len(self.failed)


def request_once(url: str, *, method: str, body: bytes | None = None) -> tuple[int, str]:
    """One request (a form body when ``body`` is given): its status and page, a 4xx/5xx included."""
    headers = {"Content-Type": "application/x-www-form-urlencoded"} if body is not None else {}
    request = urllib.request.Request(url, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return int(response.status), response.read().decode()
    except urllib.error.HTTPError as exc:
        return int(exc.code), exc.read().decode()


def request_as_a_provider(
    url: str, *, method: str, body: bytes | None = None, attempts: int = PROVIDER_ATTEMPTS
) -> Answer:
    """The request, made again after each 5xx answer, at most ``attempts`` times."""
    failed: list[tuple[int, str]] = []
    for attempt in range(1, attempts + 1):
        status, page = request_once(url, method=method, body=body)
        if status < 500 or attempt == attempts:
            return Answer(status, page, failed)
        failed.append((status, page))
    raise ValueError(f"attempts must be at least 1, not {attempts}")
