"""Configuration read from the environment variables Terraform sets on each function."""

from __future__ import annotations

import os
from dataclasses import dataclass

from outreach.errors import ConfigurationError


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


# SQS refuses a visibility timeout above 12 hours.
MAX_VISIBILITY_SECONDS = 43_200


@dataclass(frozen=True)
class RetrySchedule:
    """How long a scrape message stays hidden after its n-th receive failed with a retryable error.

    ``RETRY_SCHEDULE_SECONDS`` lists one delay per failed receive (``30,3600``: the first retry half a
    minute later, the next an hour after that); receives past the end use the last entry. A
    ``Retry-After`` the site sent is honoured between the entry and the schedule's largest delay. The
    scrape reconciler's thresholds are derived from the same numbers (modules/reconciler/README.md).
    """

    delays: tuple[int, ...]

    def for_receive(self, receive_count: int, retry_after: float | None = None) -> int:
        index = min(max(receive_count, 1), len(self.delays)) - 1
        delay = self.delays[index]
        if retry_after is not None and retry_after > delay:
            delay = min(int(retry_after + 0.999), max(self.delays))
        return delay

    @classmethod
    def parse(cls, raw: str) -> RetrySchedule:
        try:
            delays = tuple(int(part) for part in raw.split(",") if part.strip())
        except ValueError as exc:
            raise ConfigurationError(f"RETRY_SCHEDULE_SECONDS must be whole seconds, got {raw!r}") from exc
        if not delays:
            raise ConfigurationError("RETRY_SCHEDULE_SECONDS needs at least one delay")
        if any(d < 0 or d > MAX_VISIBILITY_SECONDS for d in delays):
            raise ConfigurationError(
                f"RETRY_SCHEDULE_SECONDS entries must be 0-{MAX_VISIBILITY_SECONDS} s, got {raw!r}"
            )
        return cls(delays)

    @classmethod
    def from_env(cls) -> RetrySchedule:
        return cls.parse(os.environ.get("RETRY_SCHEDULE_SECONDS", "").strip() or "30,3600")


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


@dataclass(frozen=True)
class ReconcilerSettings:
    """When the scrape reconciler may act on an open task, and how often a task may be tried.

    Terraform derives both ages from the applied settings (modules/reconciler/README.md shows the
    arithmetic): a ``Pending`` task unchanged for ``pending_after_seconds`` can no longer be sent by
    the stream, and a ``Running`` one unchanged for ``running_after_seconds`` can no longer be
    redelivered by SQS.
    """

    pending_after_seconds: int
    running_after_seconds: int
    max_attempts: int
    page_size: int

    @classmethod
    def from_env(cls) -> ReconcilerSettings:
        return cls(
            pending_after_seconds=_int("RECONCILE_PENDING_AFTER_SECONDS", 3_900, minimum=60),
            running_after_seconds=_int("RECONCILE_RUNNING_AFTER_SECONDS", 6_180, minimum=60),
            max_attempts=_int("MAX_TASK_ATTEMPTS", 6, minimum=1),
            page_size=_int("RECONCILE_PAGE_SIZE", 100, minimum=1),
        )


def email_send_grace_seconds() -> int:
    """How late an email may still go out after its ``send_at`` (``EMAIL_SEND_GRACE_SECONDS``, 1 hour).

    Past it the worker and the email reconciler fail the task ``too_late`` instead of sending; the
    schedules' retry policy and the worker's async event age use the same bound.
    """
    return _int("EMAIL_SEND_GRACE_SECONDS", 3_600, minimum=60)


def email_configuration_set() -> str:
    return _required("EMAIL_CONFIGURATION_SET")


@dataclass(frozen=True)
class EmailReconcilerSettings:
    """When the email reconciler looks at an open email task.

    ``pending_after_seconds``: a Pending task unchanged this long should have its schedule by now (its
    schedule is created right after the task). ``running_after_seconds``: a Running task unchanged
    this long, with its lease run out, was claimed by a worker that never recorded the outcome.
    ``schedule_horizon_seconds``: a Pending task due further ahead than this is not checked yet (two
    runs of the default 30-minute rate, so each due email is checked at least once before it is due).
    """

    pending_after_seconds: int
    running_after_seconds: int
    send_grace_seconds: int
    page_size: int
    schedule_horizon_seconds: int = 3_600

    @classmethod
    def from_env(cls) -> EmailReconcilerSettings:
        return cls(
            pending_after_seconds=_int("RECONCILE_PENDING_AFTER_SECONDS", 600, minimum=60),
            running_after_seconds=_int("RECONCILE_RUNNING_AFTER_SECONDS", 900, minimum=60),
            send_grace_seconds=email_send_grace_seconds(),
            page_size=_int("RECONCILE_PAGE_SIZE", 100, minimum=1),
            schedule_horizon_seconds=_int("EMAIL_SCHEDULE_HORIZON_SECONDS", 3_600, minimum=60),
        )
