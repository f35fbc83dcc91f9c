"""Error classes that decide what the retry machinery does with a failure.

Only errors named here are handled as known outcomes. Anything else is unknown and goes back to the
retry machinery (SQS redelivery, stream retry, Lambda async retry).
"""


class FatalScrapeError(Exception):
    """A retry cannot fix this site: invalid URL, blocked address, unknown host, 404/410, not HTML.

    The task moves to ``Failed`` with ``reason`` and the message is acknowledged.
    """

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


class RetryableScrapeError(Exception):
    """A temporary failure (timeout, connection reset, 5xx, 429) that survived the per-URL attempts."""


class UnreadableMessageError(Exception):
    """A queue message that no retry can make readable: not JSON, no task id, unknown task."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
