"""Configuration read from the environment variables Terraform sets on each function."""

from __future__ import annotations

import os
from dataclasses import dataclass


class ConfigurationError(RuntimeError):
    """A required environment variable is missing or malformed."""


def _required(name: str) -> str:
    value = os.environ.get(name, "").strip()
    if not value:
        raise ConfigurationError(f"environment variable {name} is required")
    return value


def _int(name: str, default: int, minimum: int = 0) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise ConfigurationError(f"{name} must be an integer, got {raw!r}") from exc
    if value < minimum:
        raise ConfigurationError(f"{name} must be >= {minimum}, got {value}")
    return value


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes"}


def _switch(name: str, default: bool) -> bool:
    """An on/off setting, ``default`` when unset; anything but 1/0, true/false, yes/no, on/off fails."""
    raw = os.environ.get(name, "").strip().lower()
    if not raw:
        return default
    if raw in {"1", "true", "yes", "on"}:
        return True
    if raw in {"0", "false", "no", "off"}:
        return False
    raise ConfigurationError(f"{name} must be 1/0, true/false, yes/no or on/off, got {raw!r}")


def tasks_table() -> str:
    return _required("TASKS_TABLE")


def scrape_queue_url() -> str:
    return _required("SCRAPE_QUEUE_URL")


def scrape_dlq_url() -> str:
    return _required("SCRAPE_DLQ_URL")


def results_bucket() -> str:
    return _required("RESULTS_BUCKET")


@dataclass(frozen=True)
class RetryBackoff:
    """Visibility timeout for a message whose scrape failed with a retryable error.

    The n-th receive waits ``base * 2**(n-1)`` seconds, capped, so a flaky site is retried in minutes
    instead of after the queue's full visibility timeout.
    """

    base_seconds: int
    max_seconds: int

    def for_receive(self, receive_count: int) -> int:
        exponent = max(receive_count, 1) - 1
        return int(min(self.max_seconds, self.base_seconds * (2 ** min(exponent, 16))))

    @classmethod
    def from_env(cls) -> RetryBackoff:
        base = _int("RETRY_BACKOFF_BASE_SECONDS", 120, minimum=0)
        cap = _int("RETRY_BACKOFF_MAX_SECONDS", 900, minimum=0)
        if cap > 43_200:
            raise ConfigurationError("RETRY_BACKOFF_MAX_SECONDS must be <= 43200 (SQS visibility limit)")
        return cls(base_seconds=base, max_seconds=max(cap, base))


@dataclass(frozen=True)
class ScrapeSettings:
    """Limits applied to every fetch the scraper makes."""

    user_agent: str
    connect_timeout: float
    read_timeout: float
    max_body_bytes: int
    max_redirects: int
    attempts_per_url: int
    max_extra_pages: int
    max_text_chars: int
    allow_loopback: bool
    # Fetch and honour each site's robots.txt (SCRAPER_RESPECT_ROBOTS_TXT, on unless set to 0).
    respect_robots_txt: bool = True

    @classmethod
    def from_env(cls) -> ScrapeSettings:
        return cls(
            user_agent=os.environ.get(
                "SCRAPER_USER_AGENT",
                "outreach-pipeline-scraper/0.1 (+company research; contact via site operator)",
            ),
            connect_timeout=float(_int("SCRAPER_CONNECT_TIMEOUT_SECONDS", 10, minimum=1)),
            read_timeout=float(_int("SCRAPER_READ_TIMEOUT_SECONDS", 20, minimum=1)),
            max_body_bytes=_int("SCRAPER_MAX_BODY_BYTES", 2 * 1024 * 1024, minimum=1024),
            max_redirects=min(_int("SCRAPER_MAX_REDIRECTS", 5), 5),
            attempts_per_url=min(_int("SCRAPER_ATTEMPTS_PER_URL", 3, minimum=1), 3),
            max_extra_pages=_int("SCRAPER_MAX_EXTRA_PAGES", 3),
            max_text_chars=_int("SCRAPER_MAX_TEXT_CHARS", 20_000, minimum=100),
            # Only tests and the embedded AWS set this: it lets the scraper reach loopback web farms.
            allow_loopback=_flag("SCRAPER_ALLOW_LOOPBACK"),
            respect_robots_txt=_switch("SCRAPER_RESPECT_ROBOTS_TXT", default=True),
        )


def claim_lease_margin_seconds() -> int:
    """Seconds a claim outlives the invocation that took it, so no live worker loses its task."""
    return _int("CLAIM_LEASE_MARGIN_SECONDS", 60, minimum=1)
