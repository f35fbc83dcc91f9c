"""The errors of the Lambda code, and what the retry machinery does with each.

Only errors named here are handled as known outcomes; anything else is unknown and goes back to the
retry machinery (SQS redelivery, stream retry, Lambda async retry), and a reconciler bounds how long
its task can stay open.

- The task is settled, the message acknowledged: ``FatalScrapeError`` (task ``Failed``),
  ``PermanentEmailError`` (``Failed``), ``SkipEmailError`` (``Cancelled``),
  ``UnreadableMessageError`` (nothing to settle: logged and dropped), ``UnusableUrlError`` and
  ``BadCompressedBodyError`` (become a ``FatalScrapeError``).
- Retried: ``RetryableScrapeError`` and its ``RetryableFetchError`` (the message returns after its
  backoff); ``StreamBatchError`` (the stream batch fails whole, so bisect isolates the record);
  ``LedgerContendedError`` (a ledger record changed under every one of a worker's conditional writes:
  the claim is released and Lambda's async retry tries again).
- Stops the function at cold start, before any work: ``ConfigurationError`` (a required environment
  variable missing or malformed).
- Moved, not sent: ``SendDeferredError`` (a first contact the per-address rule refuses now: the task
  goes back to ``Pending`` at the next allowed moment inside its window, with its schedule).
- Neither retried nor settled: ``SendOutcomeUnknownError`` (the task stays ``Running`` and the email
  reconciler settles it as ``delivery_unknown``; it is never sent again).
- Someone else moved the task first, so there is nothing to do: ``TransitionRejectedError``,
  ``TaskNotFoundError``.
- Refused input, before anything is written (raised to the operator's tools, never retried):
  ``InvalidJobInputError``, ``JobKindConflictError``, ``OperatorRefusedError``, ``ItemTooLargeError``,
  ``UnsafeEmailError``, ``MalformedFieldError`` (a stored row no reader can trust: the task is failed
  as malformed by the reconcilers), ``UnparseableRecordError`` (the stream batch fails and is bisected).
  On the SES-events queue both mean an event record no retry makes readable: the record is a batch
  item failure, retried, then in the queue's DLQ (alarm).
- Refused with a 400 page, nothing recorded: ``InvalidTokenError`` (an unsubscribe token that does not
  verify).
- Refused inbound mail, never retried (the same bytes give the same answer): ``UnparseableMessageError``
  (a message at the reply domain that ``inbound.message.parse`` cannot read within its bounds); the
  classifier answers ``UNPARSEABLE`` and the raw message stays where SES stored it, for a person.
- Inbound forwards (the inbound processor): ``ForwardOutcomeUnknownError`` (SES may have the forward:
  recorded ``forward_unknown`` on the message's receipt, counted, never sent again; the record is
  acknowledged); ``ForwardInProgressError`` (another invocation holds the forward: the record is a batch
  item failure and comes back after its visibility timeout); ``UnforwardableMessageError`` (a message
  that cannot be forwarded unchanged: the owner gets a notice naming its S3 object instead).
- A run that did what it could: ``ReconcilerRunError``, raised after the metrics so the function's
  error alarm and DLQ tell a person.
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


class AlarmEventError(Exception):
    """An event the sending guard cannot act on (``reason`` names the field): not a CloudWatch alarm's
    change to ALARM, or not one of the reputation stop alarms it was given. No retry makes it one, so
    it goes to the guard's DLQ, whose alarm calls a person."""

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


class OperatorRefusedError(Exception):
    """An operator's action this task must never get; ``why`` says why, for the person who asked."""

    def __init__(self, task_id: str, action: str, why: str) -> None:
        super().__init__(f"{action} refused for {task_id}: {why}")
        self.task_id = task_id
        self.action = action
        self.why = why


# What a job of each ``task_model.Kind`` is, in the operator's words.
_JOB_KINDS = {"scrape": "a scrape job", "email": "a campaign (a job of email tasks)"}


class JobKindConflictError(Exception):
    """A job id that already names a job of another kind (a campaign id equal to a scrape job id):
    recording it would merge the two jobs' row and counters."""

    def __init__(self, job_id: str, existing: str, wanted: str) -> None:
        super().__init__(
            f"job id {job_id!r} is already {_JOB_KINDS[existing]}; {_JOB_KINDS[wanted]} cannot use it "
            "(its row and counters would merge with the other's): choose another id"
        )
        self.job_id = job_id
        self.existing = existing
        self.wanted = wanted


class TaskNotFoundError(Exception):
    def __init__(self, task_id: str) -> None:
        super().__init__(f"no task {task_id}")
        self.task_id = task_id


class TransitionRejectedError(Exception):
    """The task was not in the state the transition requires (someone else moved it first)."""

    def __init__(self, task_id: str, action: str) -> None:
        super().__init__(f"{action} rejected for {task_id}: task is not in the required state")
        self.task_id = task_id
        self.action = action


class SkipEmailError(Exception):
    """A follow-up that must not go out (``reason``): the task becomes ``Cancelled``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class PermanentEmailError(Exception):
    """This email cannot go out, now or later: the task becomes ``Failed`` with ``reason``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class LedgerContendedError(Exception):
    """A contact record kept changing between a worker's read and its conditional write, every try."""


class SendDeferredError(Exception):
    """An email that may go out later but not now (``reason``), from ``not_before`` (epoch seconds): the
    worker moves the task there, inside its window, and its schedule with it."""

    def __init__(self, reason: str, not_before: float) -> None:
        super().__init__(reason)
        self.reason = reason
        self.not_before = not_before


class UnsafeEmailError(ValueError):
    """A message that must not be sent: a control character in a header, or a required field empty."""


class ItemTooLargeError(ValueError):
    """An item DynamoDB would refuse (or that leaves no room for its later updates): names the item."""

    def __init__(self, key: str, size: int, limit: int) -> None:
        super().__init__(
            f"{key}: the item would be {size:,} bytes, over the {limit:,} bytes it may have "
            "(DynamoDB's item limit is 400 KB)"
        )
        self.key = key
        self.size = size
        self.limit = limit


class UnparseableRecordError(ValueError):
    """A stream record that does not have the shape of a tasks-table change."""


class MalformedFieldError(ValueError):
    """A stored field that does not hold what the task store writes: ``field`` names it."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


class UnusableUrlError(ValueError):
    """Text that has no canonical http(s) form; the message says why."""


class InvalidJobInputError(ValueError):
    """A job id or URL that cannot become a task."""


class BadCompressedBodyError(Exception):
    """The body does not decompress as its Content-Encoding says (a broken or cut stream)."""


class StreamBatchError(Exception):
    """A record without a sequence number: the whole batch must fail so bisect can isolate it."""


class ConfigurationError(RuntimeError):
    """A required environment variable is missing or malformed."""


class RetryableFetchError(RetryableScrapeError):
    """A temporary failure of one URL that outlasted its attempts; ``reason`` names the last one."""


class InvalidTokenError(ValueError):
    """An unsubscribe token that proves nothing: malformed, too long, forged or altered (its MAC does
    not verify with the unsubscribe key). The endpoint answers 400 and changes nothing; never retried."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class UnparseableMessageError(ValueError):
    """An inbound message that no retry makes readable: empty, over the size bound, too many header
    fields, nested deeper than the parser follows, or without a sender address.

    Never retried: reading the same bytes again gives the same answer. ``inbound.classify.classify_raw``
    answers ``UNPARSEABLE`` with ``reason`` (it names the bound or the missing part, never the content:
    safe for logs) and the raw message stays where SES stored it.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ForwardOutcomeUnknownError(Exception):
    """SendEmail of an inbound message's forward may have reached SES and its answer was lost (a read
    timeout, a dropped connection, an unknown error): an email cannot be taken back, so the message's
    receipt says ``forward_unknown`` and it is never forwarded again (metric ``InboundForwardsUnknown``).
    """


class ForwardInProgressError(Exception):
    """Another invocation holds the forward of this inbound message (its lease is live): the record is
    reported as a batch item failure and comes back after its visibility timeout, by when the forward is
    recorded or its holder's lease has run out."""


class ForwardDeferredError(Exception):
    """Too little of the invocation is left to start a record or claim its forward: the record is a batch
    item failure and comes back after its visibility timeout, to an invocation with time for it."""


class UnforwardableMessageError(ValueError):
    """An inbound message that cannot be forwarded unchanged: a header field its body needs (the MIME
    fields) that is no safe header, or a message SES refused to send (``MessageRejected``: an attachment
    type SES does not send, a virus). The owner mailbox gets a notice naming the S3 object instead;
    ``reason`` is safe for logs."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
