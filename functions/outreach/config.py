"""Configuration read from the environment variables Terraform sets on each function.

Terraform owns every setting: its modules declare each default and validate each value, and set
every variable a function reads here (modules/*/main.tf). Nothing here has a default of its own, so
a variable that is missing or malformed fails the invocation at its start with a
``ConfigurationError`` that names it. Each handler reads its whole settings first (``for_scraper``
and the others below) before it does any work.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from outreach.errors import ConfigurationError
from outreach.task_model import MAX_OPEN_INDEX_SHARDS
from outreach.warmup_ramp import WarmupRamp, parse_caps, parse_start


def _required(name: str) -> str:
    value = os.environ.get(name, "").strip()
    if not value:
        raise ConfigurationError(f"environment variable {name} is required")
    return value


def _int(name: str, minimum: int = 0) -> int:
    raw = _required(name)
    try:
        value = int(raw)
    except ValueError as exc:
        raise ConfigurationError(f"{name} must be an integer, got {raw!r}") from exc
    if value < minimum:
        raise ConfigurationError(f"{name} must be >= {minimum}, got {value}")
    return value


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes"}


def _switch(name: str) -> bool:
    """An on/off setting: anything but 1/0, true/false, yes/no, on/off fails."""
    raw = _required(name).lower()
    if raw in {"1", "true", "yes", "on"}:
        return True
    if raw in {"0", "false", "no", "off"}:
        return False
    raise ConfigurationError(f"{name} must be 1/0, true/false, yes/no or on/off, got {raw!r}")


def tasks_table() -> str:
    return _required("TASKS_TABLE")


def open_index_shards() -> int:
    """How many shards the ``open-tasks`` index key is written over (``OPEN_INDEX_SHARDS``,
    modules/tasks-table's ``open_index_shards``): creation writes each task to one, readers query all."""
    shards = _int("OPEN_INDEX_SHARDS", minimum=1)
    if shards > MAX_OPEN_INDEX_SHARDS:
        raise ConfigurationError(f"OPEN_INDEX_SHARDS must be <= {MAX_OPEN_INDEX_SHARDS}, got {shards}")
    return shards


def contacts_table() -> str:
    """The contact ledger's table (modules/contact-ledger): one record per address and blocked domain."""
    return _required("CONTACTS_TABLE")


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
        return cls.parse(_required("RETRY_SCHEDULE_SECONDS"))


@dataclass(frozen=True)
class ScrapeSettings:
    """Limits applied to every fetch the scraper makes (modules/scrape-pipeline, ``scraper.fetch``)."""

    user_agent: str
    connect_timeout: float
    read_timeout: float
    max_body_bytes: int
    max_redirects: int
    attempts_per_url: int
    max_extra_pages: int
    max_text_chars: int
    allow_loopback: bool
    # At most this many of one site's pages fetched at once (SCRAPER_CONNECTIONS_PER_SITE): the
    # extra pages after the home page; 1 fetches them one after another.
    connections_per_site: int
    # Fetch and honour each site's robots.txt (SCRAPER_RESPECT_ROBOTS_TXT).
    respect_robots_txt: bool = True

    @classmethod
    def from_env(cls) -> ScrapeSettings:
        return cls(
            user_agent=_required("SCRAPER_USER_AGENT"),
            connect_timeout=float(_int("SCRAPER_CONNECT_TIMEOUT_SECONDS", minimum=1)),
            read_timeout=float(_int("SCRAPER_READ_TIMEOUT_SECONDS", minimum=1)),
            max_body_bytes=_int("SCRAPER_MAX_BODY_BYTES", minimum=1024),
            max_redirects=min(_int("SCRAPER_MAX_REDIRECTS"), 5),
            attempts_per_url=min(_int("SCRAPER_ATTEMPTS_PER_URL", minimum=1), 3),
            max_extra_pages=_int("SCRAPER_MAX_EXTRA_PAGES"),
            max_text_chars=_int("SCRAPER_MAX_TEXT_CHARS", minimum=100),
            # An opt-in no deployed function has: only tests and the embedded AWS set it, so the
            # scraper may reach their loopback web farms. Unset is off.
            allow_loopback=_flag("SCRAPER_ALLOW_LOOPBACK"),
            connections_per_site=min(_int("SCRAPER_CONNECTIONS_PER_SITE", minimum=1), 6),
            respect_robots_txt=_switch("SCRAPER_RESPECT_ROBOTS_TXT"),
        )


def claim_lease_margin_seconds() -> int:
    """Seconds a claim outlives the invocation that took it, so no live worker loses its task."""
    return _int("CLAIM_LEASE_MARGIN_SECONDS", minimum=1)


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
            pending_after_seconds=_int("RECONCILE_PENDING_AFTER_SECONDS", minimum=60),
            running_after_seconds=_int("RECONCILE_RUNNING_AFTER_SECONDS", minimum=60),
            max_attempts=_int("MAX_TASK_ATTEMPTS", minimum=1),
            page_size=_int("RECONCILE_PAGE_SIZE", minimum=1),
        )


# modules/email's send_grace_seconds default, for the operator's commands only: they create
# schedules (email_schedules.ensure_schedule) outside any function, where the variable is unset.
# Every function that reads it has it from Terraform, and checks that at its start.
_OPERATOR_SEND_GRACE_SECONDS = 3_600


def email_send_grace_seconds() -> int:
    """How late an email may still go out after its ``send_at`` (``EMAIL_SEND_GRACE_SECONDS``).

    Past it the worker and the email reconciler fail the task ``too_late`` instead of sending; the
    schedules' retry policy and the worker's async event age use the same bound.
    """
    if not os.environ.get("EMAIL_SEND_GRACE_SECONDS", "").strip():
        return _OPERATOR_SEND_GRACE_SECONDS
    return _int("EMAIL_SEND_GRACE_SECONDS", minimum=60)


def _send_grace_seconds() -> int:
    return _int("EMAIL_SEND_GRACE_SECONDS", minimum=60)


def email_configuration_set() -> str:
    return _required("EMAIL_CONFIGURATION_SET")


@dataclass(frozen=True)
class EmailReconcilerSettings:
    """When the email reconciler looks at an open email task.

    ``pending_after_seconds``: a Pending task unchanged this long should have its schedule by now (its
    schedule is created right after the task). ``running_after_seconds``: a Running task unchanged
    this long, with its lease run out, was claimed by a worker that never recorded the outcome.
    ``schedule_horizon_seconds``: a Pending task due further ahead than this is not checked yet
    (modules/email sets it to two runs of the reconciler's default rate, so each due email is checked
    at least once before it is due).
    """

    pending_after_seconds: int
    running_after_seconds: int
    send_grace_seconds: int
    page_size: int
    schedule_horizon_seconds: int

    @classmethod
    def from_env(cls) -> EmailReconcilerSettings:
        return cls(
            pending_after_seconds=_int("RECONCILE_PENDING_AFTER_SECONDS", minimum=60),
            running_after_seconds=_int("RECONCILE_RUNNING_AFTER_SECONDS", minimum=60),
            send_grace_seconds=_send_grace_seconds(),
            page_size=_int("RECONCILE_PAGE_SIZE", minimum=1),
            schedule_horizon_seconds=_int("EMAIL_SCHEDULE_HORIZON_SECONDS", minimum=60),
        )


# ---- each function's whole settings, read at the start of every invocation ----------------------


def for_dispatcher() -> None:
    """Check the dispatcher's settings: the table it is wired to and the queue it sends to."""
    tasks_table()
    scrape_queue_url()


def for_scraper() -> ScrapeSettings:
    """Check every scraper setting; return its fetch limits."""
    tasks_table()
    scrape_queue_url()
    scrape_dlq_url()
    results_bucket()
    RetrySchedule.from_env()
    claim_lease_margin_seconds()
    return ScrapeSettings.from_env()


def first_contact_gap_seconds() -> int:
    """The least time between two first contacts to one address, any campaigns (modules/email's
    ``first_contact.gap_seconds``; ``contacts.FirstContactRule``)."""
    return _int("FIRST_CONTACT_GAP_SECONDS", minimum=0)


def first_contacts_per_30_days() -> int:
    """The most first contacts to one address in any 30 days (``first_contact.per_30_days``)."""
    return _int("FIRST_CONTACTS_PER_30_DAYS", minimum=1)


def sending_domain() -> str:
    """The domain of the SES identity campaigns send from (modules/email's ``sender_identity``, the
    domain of an address identity): the identity whose emails per UTC day the warm-up ramp counts."""
    return _required("SENDING_DOMAIN")


def warmup_ramp() -> WarmupRamp:
    """The sending identity's warm-up ramp (modules/email's ``warmup``): ``WARMUP_START_DATE`` (``none``
    or ``YYYY-MM-DD``) and ``WARMUP_DAILY_CAPS`` (comma-separated, one per day)."""
    start_text, caps_text = _required("WARMUP_START_DATE"), _required("WARMUP_DAILY_CAPS")
    try:
        start = parse_start(start_text)
    except ValueError as exc:
        raise ConfigurationError(f"WARMUP_START_DATE: {exc}") from exc
    try:
        return WarmupRamp(start, parse_caps(caps_text))
    except ValueError as exc:
        raise ConfigurationError(f"WARMUP_DAILY_CAPS: {exc}") from exc


def email_paused_recheck_seconds() -> int:
    """How long an email SES refused as paused waits before it is tried again
    (``EMAIL_PAUSED_RECHECK_SECONDS``, modules/email's ``paused_recheck_seconds``; ``sending_pause``)."""
    return _int("EMAIL_PAUSED_RECHECK_SECONDS", minimum=60)


def for_email_worker() -> None:
    """Check every email worker setting."""
    tasks_table()
    contacts_table()
    email_configuration_set()
    _send_grace_seconds()
    email_paused_recheck_seconds()
    claim_lease_margin_seconds()
    first_contact_gap_seconds()
    first_contacts_per_30_days()
    sending_domain()
    warmup_ramp()


def reputation_stop_alarms() -> frozenset[str]:
    """The names of the reputation stop alarms whose ALARM pauses sending (``REPUTATION_STOP_ALARMS``,
    comma-separated; modules/email)."""
    names = frozenset(name.strip() for name in _required("REPUTATION_STOP_ALARMS").split(",") if name.strip())
    if not names:
        raise ConfigurationError("REPUTATION_STOP_ALARMS must name at least one alarm")
    return names


def for_sending_guard() -> frozenset[str]:
    """Check every sending guard setting: the configuration set it pauses, the alarms it acts on."""
    email_configuration_set()
    return reputation_stop_alarms()


def for_scrape_reconciler() -> ReconcilerSettings:
    tasks_table()
    open_index_shards()
    scrape_queue_url()
    return ReconcilerSettings.from_env()


def for_email_reconciler() -> EmailReconcilerSettings:
    tasks_table()
    open_index_shards()
    return EmailReconcilerSettings.from_env()


# ---- the email feedback functions (modules/email-feedback) ----------------------------------------


@dataclass(frozen=True)
class SesEventConsumerSettings:
    """Where a stop's cancelled emails have their schedules (``EMAIL_SCHEDULE_GROUP``), and how many
    soft bounces of distinct messages make an address ``bounced`` (``SOFT_BOUNCE_LIMIT``)."""

    schedule_group: str
    soft_bounce_limit: int


def for_ses_event_consumer() -> SesEventConsumerSettings:
    """Check every SES-events consumer setting: both tables, the schedule group, the soft-bounce limit."""
    tasks_table()
    contacts_table()
    return SesEventConsumerSettings(
        schedule_group=_required("EMAIL_SCHEDULE_GROUP"),
        soft_bounce_limit=_int("SOFT_BOUNCE_LIMIT", minimum=1),
    )


@dataclass(frozen=True)
class UnsubscribeSettings:
    """The unsubscribe key tokens are verified with (``UNSUBSCRIBE_KEY_ID``, a KMS HMAC_256 key) and the
    SES-events queue the fan-out message goes to (``CONTACT_EVENTS_QUEUE_URL``)."""

    key_id: str
    contact_events_queue_url: str


def for_unsubscribe() -> UnsubscribeSettings:
    """Check every unsubscribe endpoint setting: the ledger, the key and the queue."""
    contacts_table()
    return UnsubscribeSettings(
        key_id=_required("UNSUBSCRIBE_KEY_ID"),
        contact_events_queue_url=_required("CONTACT_EVENTS_QUEUE_URL"),
    )


# ---- the inbound processor (modules/email-inbound) ------------------------------------------------


@dataclass(frozen=True)
class InboundProcessorSettings:
    """What the inbound processor reads and where it acts (modules/email-inbound sets each one).

    - ``bucket`` and ``bucket_region``: where SES stores each received message (``INBOUND_BUCKET``,
      ``INBOUND_BUCKET_REGION``: the receiving region, which may not be the pipeline's own);
    - ``reply_domain``: the domain replies arrive at (``REPLY_DOMAIN``, lower case), and
      ``unsubscribe_local_part`` the mailbox of the ``mailto:`` List-Unsubscribe on it
      (``UNSUBSCRIBE_LOCAL_PART``, lower case);
    - ``forward_from``: the address forwards are sent from (``FORWARD_FROM``, an SES identity), and
      ``unmatched_forward_to`` the mailbox unmatched and unparseable mail goes to
      (``UNMATCHED_FORWARD_TO``), also a campaign's owner when its tasks name none;
    - ``key_id``: the KMS HMAC key reply tokens are verified with (``UNSUBSCRIBE_KEY_ID``);
    - ``schedule_group``, ``worker_arn``, ``scheduler_role_arn``, ``dlq_arn``: what a postponed email's
      new schedule is created with (``EMAIL_SCHEDULE_GROUP``, ``EMAIL_WORKER_ARN``,
      ``EMAIL_SCHEDULER_ROLE_ARN``, ``EMAIL_DLQ_ARN``, as the email reconciler has them);
    - ``soft_bounce_limit``: soft bounces of distinct messages that make an address ``bounced``
      (``SOFT_BOUNCE_LIMIT``, as the SES-events consumer counts them);
    - ``away_default_days``: the days of absence assumed when an out-of-office reply names no return
      date (``AWAY_DEFAULT_DAYS``, 1-90);
    - ``max_message_bytes``: the largest stored message read (``INBOUND_MAX_MESSAGE_BYTES``); a bigger
      one is not read and is forwarded as a notice naming its S3 object.
    """

    bucket: str
    bucket_region: str
    reply_domain: str
    unsubscribe_local_part: str
    forward_from: str
    unmatched_forward_to: str
    key_id: str
    schedule_group: str
    worker_arn: str
    scheduler_role_arn: str
    dlq_arn: str
    soft_bounce_limit: int
    away_default_days: int
    max_message_bytes: int


# SES receiving takes messages of up to 40 MB, headers included:
# https://docs.aws.amazon.com/ses/latest/APIReference/API_S3Action.html
_SES_RECEIVING_MAX_BYTES = 40 * 1024 * 1024
_MAX_AWAY_DAYS = 90


def for_inbound_processor() -> InboundProcessorSettings:
    """Check every inbound processor setting: both tables and the processor's own."""
    tasks_table()
    contacts_table()
    away_days = _int("AWAY_DEFAULT_DAYS", minimum=1)
    if away_days > _MAX_AWAY_DAYS:
        raise ConfigurationError(f"AWAY_DEFAULT_DAYS must be at most {_MAX_AWAY_DAYS}, got {away_days}")
    max_bytes = _int("INBOUND_MAX_MESSAGE_BYTES", minimum=1024)
    if max_bytes > _SES_RECEIVING_MAX_BYTES:
        raise ConfigurationError(
            f"INBOUND_MAX_MESSAGE_BYTES must be at most {_SES_RECEIVING_MAX_BYTES} (SES receiving's "
            f"limit), got {max_bytes}"
        )
    local_part = _required("UNSUBSCRIBE_LOCAL_PART").lower()
    if "@" in local_part:
        raise ConfigurationError(f"UNSUBSCRIBE_LOCAL_PART must be a local part without @, got {local_part!r}")
    return InboundProcessorSettings(
        bucket=_required("INBOUND_BUCKET"),
        bucket_region=_required("INBOUND_BUCKET_REGION"),
        reply_domain=_required("REPLY_DOMAIN").lower().rstrip("."),
        unsubscribe_local_part=local_part,
        forward_from=_required("FORWARD_FROM"),
        unmatched_forward_to=_required("UNMATCHED_FORWARD_TO"),
        key_id=_required("UNSUBSCRIBE_KEY_ID"),
        schedule_group=_required("EMAIL_SCHEDULE_GROUP"),
        worker_arn=_required("EMAIL_WORKER_ARN"),
        scheduler_role_arn=_required("EMAIL_SCHEDULER_ROLE_ARN"),
        dlq_arn=_required("EMAIL_DLQ_ARN"),
        soft_bounce_limit=_int("SOFT_BOUNCE_LIMIT", minimum=1),
        away_default_days=away_days,
        max_message_bytes=max_bytes,
    )
