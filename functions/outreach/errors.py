"""Error classes that decide what the retry machinery does with a failure.

Only errors named here are handled as known outcomes. Anything else is unknown and goes back to the
retry machinery (SQS redelivery, stream retry, Lambda async retry), and a reconciler bounds how long
its task can stay open.
"""

from __future__ import annotations


class ScrapeError(Exception):
    """A classified scrape failure: ``reason`` is a short stable name, ``detail`` says what happened."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


class FatalScrapeError(ScrapeError):
    """A retry cannot fix this site: invalid URL, blocked address, unknown host, 404/410, not HTML.

    The task moves to ``Failed`` with ``reason`` and the message is acknowledged.
    """


class RetryableScrapeError(ScrapeError):
    """A temporary failure (timeout, connection reset, 5xx, 429) that survived the per-URL attempts.

    ``retry_after`` is the delay in seconds the site asked for (``Retry-After``), if it named one.
    """

    def __init__(self, reason: str, detail: str = "", *, retry_after: float | None = None) -> None:
        super().__init__(reason, detail)
        self.retry_after = retry_after


class UnreadableMessageError(Exception):
    """A queue message that no retry can make readable: not JSON, no task id, unknown task."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ReconcilerRunError(Exception):
    """A reconciler run that handled every task it could, but not all: malformed rows or actions that
    raised (each logged with its task id). Raised after the run's metrics are published, so the
    function's error alarm and DLQ tell a person."""


class SendOutcomeUnknownError(Exception):
    """SendEmail may have reached SES and its answer was lost (read timeout, dropped connection).

    The task stays ``Running`` (it may have been sent) and the email reconciler settles it as
    ``delivery_unknown``; it is never released for another send.
    """
