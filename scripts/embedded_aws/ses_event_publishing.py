"""SES v2 event publishing on the embedded AWS: each accepted SendEmail's events, on the emulator's
clock, to the configuration set's EventBridge destinations, and a record of every event published.

moto publishes no sending events at all. SES publishes, for an email sent with a configuration set,
each event type an enabled event destination matches
(https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_EventDestination.html). To EventBridge
it sends them to the default bus, the only one supported
(https://docs.aws.amazon.com/ses/latest/dg/monitoring-eventbridge.html), as events with ``source``
``aws.ses`` and the ``detail-type`` of the type: ``Email Sent``, ``Email Delivered``, ``Email
Bounced``, ``Email Complaint Received``, ``Email Rejected``, ``Email Delivery Delayed``, ``Email
Rendering Failed``, ... (https://docs.aws.amazon.com/eventbridge/latest/ref/events-ref-ses.html).
The ``detail`` is the event record SES publishes to every destination: ``eventType``, the ``mail``
object and the type's object (``send``, ``delivery``, ``bounce``, ``complaint``, ``reject``,
``deliveryDelay``), with the fields of
https://docs.aws.amazon.com/ses/latest/dg/event-publishing-retrieving-sns-contents.html and the
shapes of its examples (event-publishing-retrieving-sns-examples.html). ``mail.tags`` holds the
message's EmailTags as ``{name: [value]}`` plus the tags SES adds itself: ``ses:configuration-set``,
``ses:source-ip`` (the caller's address), ``ses:from-domain``, ``ses:caller-identity`` (the IAM user
of the caller's access key, else the key id), and ``ses:outgoing-ip`` on a delivery, as the examples
show. The event's ``resources`` names the configuration set's ARN (unconfirmed: the pages above show
no EventBridge envelope).

When each event happens is ``ses_outcomes``'s: ``Send`` at once (published before SendEmail
answers), the rest a few virtual seconds later on the emulator's clock (moto's ``utcnow``, the
virtual clock when one is installed), published by a thread that runs while events are due.
A hard bounce or complaint also puts the address on the account's suppression list when the
configuration set's suppression options name that reason, as SES does
(https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_SuppressionOptions.html); an address
already on it bounces ``Permanent``/``OnAccountSuppressionList`` without a delivery attempt
(event-publishing-retrieving-sns-contents.html, "Bounce types"). Without suppression options on the
configuration set the account-level settings would apply; the emulator has none (moto lacks
PutAccountSuppressionAttributes), so nothing is suppressed automatically then. Rendering failures
(templated sends only), opens, clicks and subscriptions never happen here.

``published_events`` reads the record of every event published (id, type, recipients, time), from
the process running moto: in-process, or the one running the embedded server. ``happened_events``
reads what happened to each accepted email whether or not a destination took the event (the
reputation metrics count from it, ``ses_reputation_metrics``).
"""

from __future__ import annotations

import heapq
import itertools
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any

from embedded_aws.base import arn_parts
from embedded_aws.ses_event_records import LOOPBACK, bounce_object, delivery_object, mail_object, stamp
from embedded_aws.ses_outcomes import SesOutcomes, active_outcomes

DETAIL_TYPES = {
    "SEND": "Email Sent",
    "REJECT": "Email Rejected",
    "BOUNCE": "Email Bounced",
    "COMPLAINT": "Email Complaint Received",
    "DELIVERY": "Email Delivered",
    "DELIVERY_DELAY": "Email Delivery Delayed",
    "RENDERING_FAILURE": "Email Rendering Failed",
}
# eventType and the name of the type's object in an event record (sns-contents, "Top-level JSON object").
_RECORD_NAMES = {
    "SEND": ("Send", "send"),
    "REJECT": ("Reject", "reject"),
    "BOUNCE": ("Bounce", "bounce"),
    "COMPLAINT": ("Complaint", "complaint"),
    "DELIVERY": ("Delivery", "delivery"),
    "DELIVERY_DELAY": ("DeliveryDelay", "deliveryDelay"),
}
_STATE = "_outreach_ses_events"
_LOCK = threading.Lock()
# How long SES keeps retrying a delayed message (the DeliveryDelay object's expirationTime).
_RETRY_SECONDS = 14 * 3600.0


@dataclass(frozen=True)
class PublishedEvent:
    """One event SES published to an EventBridge destination (``copies`` times, one ``event_id``)."""

    event_id: str
    event_type: str
    recipients: tuple[str, ...]
    message_id: str
    at: float
    destination: str
    copies: int
    bounce_type: str | None
    event: dict[str, Any]


@dataclass(frozen=True)
class HappenedEvent:
    """One event of an accepted email when it happened, published to a destination or not."""

    message_id: str
    event_type: str
    recipients: tuple[str, ...]
    at: float
    configuration_set: str
    bounce_type: str | None = None
    bounce_sub_type: str | None = None


@dataclass(order=True)
class _Planned:
    due: float
    order: int
    event_type: str = field(compare=False)
    recipients: tuple[str, ...] = field(compare=False)
    details: dict[str, Any] = field(compare=False)
    email: _Email = field(compare=False)


@dataclass
class _Email:
    """What every event of one accepted email shares."""

    account_id: str
    region: str
    configuration_set: str
    suppressed_reasons: frozenset[str]
    mail: dict[str, Any]
    sent_at: float
    copies: int
    state: dict[str, Any]


def _now() -> float:
    from embedded_aws.ses_account import emulator_now

    return emulator_now()


def _sesv2_backend(region: str, account_id: str | None) -> Any:
    from moto.core.models import DEFAULT_ACCOUNT_ID
    from moto.sesv2.models import sesv2_backends

    return sesv2_backends[account_id or DEFAULT_ACCOUNT_ID][region]


def _state(backend: Any) -> dict[str, Any]:
    """Per SES backend (account and region); moto's reset drops it, and with it what was still due."""
    with _LOCK:
        state = backend.__dict__.get(_STATE)
        if state is None:
            state = {"published": [], "errors": [], "happened": []}
            backend.__dict__[_STATE] = state
        return state  # type: ignore[no-any-return]


def published_events(region: str, account_id: str | None = None) -> list[PublishedEvent]:
    """Every event the embedded SES published in ``region``, in the order published."""
    state = _state(_sesv2_backend(region, account_id))
    with _LOCK:
        return list(state["published"])


def happened_events(region: str, account_id: str | None = None) -> list[HappenedEvent]:
    """Every event that happened to an email the embedded SES accepted in ``region`` (``Send`` too), in
    the order they happened, whatever the configuration set's destinations take."""
    state = _state(_sesv2_backend(region, account_id))
    with _LOCK:
        return list(state["happened"])


def pending_events(region: str, account_id: str | None = None) -> int:
    """How many planned events of ``region`` are not published yet (waiting for the clock, or being
    published now); 0 once everything SES accepted so far has had all its events."""
    from moto.core.models import DEFAULT_ACCOUNT_ID

    return _publisher.pending(region, account_id or DEFAULT_ACCOUNT_ID)


def publishing_errors(region: str, account_id: str | None = None) -> list[str]:
    """Events that could not be published (their bus is missing, say): what, where, and the error."""
    state = _state(_sesv2_backend(region, account_id))
    with _LOCK:
        return list(state["errors"])


# -- what happens to each recipient --------------------------------------------------------------------
def _plan_recipient(
    address: str, email: _Email, outcomes: SesOutcomes, suppressed: bool
) -> list[tuple[float, str, dict[str, Any]]]:
    """(when, event type, the type's object) for one recipient, from its outcome."""
    key = address.lower()
    sent = email.sent_at
    first = sent + outcomes.delivery_seconds
    if suppressed:
        return [(first, "BOUNCE", bounce_object(address, "Permanent", "OnAccountSuppressionList", first))]
    if key in outcomes.hard_bounce:
        return [(first, "BOUNCE", bounce_object(address, "Permanent", "General", first))]
    if key in outcomes.soft_bounce:
        at = sent + outcomes.soft_bounce_seconds
        return [(at, "BOUNCE", bounce_object(address, "Transient", "General", at))]
    planned: list[tuple[float, str, dict[str, Any]]] = []
    delivered = first
    if key in outcomes.delay:
        delivered = max(sent + outcomes.delay[key], first)
        delay = {
            "timestamp": stamp(first),
            "delayType": "TransientCommunicationFailure",
            "expirationTime": stamp(sent + _RETRY_SECONDS),
            "delayedRecipients": [
                {
                    "emailAddress": address,
                    "status": "4.4.1",
                    "diagnosticCode": "smtp; 421 4.4.1 Unable to connect to remote host",
                }
            ],
            "reportingMTA": LOOPBACK,
        }
        planned.append((first, "DELIVERY_DELAY", delay))
    planned.append((delivered, "DELIVERY", delivery_object(address, sent, delivered)))
    if key in outcomes.complain:
        at = delivered + outcomes.complaint_seconds
        complaint = {
            "complainedRecipients": [{"emailAddress": address}],
            "timestamp": stamp(at),
            "feedbackId": f"{uuid.uuid4()}-000000",
            "complaintFeedbackType": "abuse",
            "complaintSubType": None,
            "arrivalDate": stamp(at),
        }
        planned.append((at, "COMPLAINT", complaint))
    return planned


_order = itertools.count()


def _plan(email: _Email, outcomes: SesOutcomes, response: Any) -> list[_Planned]:
    from embedded_aws.ses_v2 import is_suppressed

    recipients = tuple(email.mail["destination"])
    planned = [_Planned(email.sent_at, next(_order), "SEND", recipients, {}, email)]
    if any(address.lower() in outcomes.reject for address in recipients):
        reject = {"reason": "Bad content"}
        planned.append(_Planned(email.sent_at, next(_order), "REJECT", recipients, reject, email))
        return planned
    backend = response.sesv2_backend
    for address in recipients:
        suppressed = bool(email.suppressed_reasons) and is_suppressed(backend, address)
        for at, event_type, details in _plan_recipient(address, email, outcomes, suppressed):
            planned.append(_Planned(at, next(_order), event_type, (address,), details, email))
    return planned


# -- publishing ----------------------------------------------------------------------------------------
def _described(exc: Exception) -> str:
    """An error's type and message (moto's errors keep theirs in ``message``)."""
    return f"{type(exc).__name__}: {getattr(exc, 'message', None) or exc}"


def _publish(item: _Planned) -> None:
    from embedded_aws.event_bus import deliver_event, event_time
    from embedded_aws.ses_v2 import event_destinations, suppress

    email = item.email
    backend = _sesv2_backend(email.region, email.account_id)
    if backend.__dict__.get(_STATE) is not email.state:
        return  # moto was reset since the send: the email is gone
    details = item.details
    bounce = (details.get("bounceType"), details.get("bounceSubType"))
    hard = item.event_type == "BOUNCE" and bounce == ("Permanent", "General")
    if hard and "BOUNCE" in email.suppressed_reasons:
        suppress(backend, item.recipients[0], "BOUNCE", item.due)
    if item.event_type == "COMPLAINT" and "COMPLAINT" in email.suppressed_reasons:
        suppress(backend, item.recipients[0], "COMPLAINT", item.due)
    happened = HappenedEvent(
        str(email.mail["messageId"]),
        item.event_type,
        item.recipients,
        item.due,
        email.configuration_set,
        *bounce if item.event_type == "BOUNCE" else (None, None),
    )
    with _LOCK:
        email.state["happened"].append(happened)
    event_type, record_key = _RECORD_NAMES[item.event_type]
    mail = email.mail
    if item.event_type == "DELIVERY":
        mail = {**mail, "tags": {**mail["tags"], "ses:outgoing-ip": [LOOPBACK]}}
    for destination in event_destinations(backend, email.configuration_set):
        bus = (destination.get("EventBridgeDestination") or {}).get("EventBusArn")
        if (
            not destination.get("Enabled")
            or not bus
            or item.event_type not in destination.get("MatchingEventTypes", [])
        ):
            continue
        _, region, account, resource = arn_parts(bus)
        event: dict[str, Any] = {
            "version": "0",
            "id": str(uuid.uuid4()),
            "detail-type": DETAIL_TYPES[item.event_type],
            "source": "aws.ses",
            "account": email.account_id,
            "time": event_time(item.due),
            "region": email.region,
            "resources": [
                f"arn:aws:ses:{email.region}:{email.account_id}:configuration-set/{email.configuration_set}"
            ],
            "detail": {"eventType": event_type, "mail": mail, record_key: details},
        }
        published = PublishedEvent(
            event["id"],
            item.event_type,
            item.recipients,
            mail["messageId"],
            item.due,
            str(destination.get("Name", "")),
            email.copies,
            details.get("bounceType") if item.event_type == "BOUNCE" else None,
            event,
        )
        # On record before any target has it, so a reader that sees its effect finds the record.
        with _LOCK:
            email.state["published"].append(published)
        try:
            deliver_event(account, region, resource, event, copies=email.copies)
        except Exception as exc:  # outcome: kept in publishing_errors; SES drops what it cannot publish
            with _LOCK:
                email.state["published"].remove(published)
                email.state["errors"].append(f"{event['detail-type']} to {bus}: {_described(exc)}")


class _Publisher:
    """Publishes planned events when the emulator's clock reaches them; runs while any are due."""

    def __init__(self) -> None:
        self._heap: list[_Planned] = []
        self._cv = threading.Condition()
        self._running = False
        self._publishing = 0  # taken off the heap, not yet published

    def add(self, items: list[_Planned]) -> None:
        with self._cv:
            for item in items:
                heapq.heappush(self._heap, item)
            if not self._running:
                self._running = True
                threading.Thread(target=self._run, name="ses-events", daemon=True).start()
            self._cv.notify()

    def pending(self, region: str, account_id: str) -> int:
        with self._cv:
            due = sum(1 for p in self._heap if (p.email.region, p.email.account_id) == (region, account_id))
            return due + self._publishing

    def _run(self) -> None:
        while True:
            with self._cv:
                if not self._heap:
                    self._running = False
                    return
                if self._heap[0].due > _now():
                    self._cv.wait(0.02)
                    continue
                item = heapq.heappop(self._heap)
                self._publishing += 1
            try:
                _publish(item)
            except Exception as exc:  # outcome: kept in publishing_errors; later events still go out
                with _LOCK:
                    item.email.state["errors"].append(f"{item.event_type}: {_described(exc)}")
            finally:
                with self._cv:
                    self._publishing -= 1


_publisher = _Publisher()


def publish_accepted(response: Any, request: dict[str, Any], record: Any) -> None:
    """Plan the events of an email SES just accepted (``record``: its ``ses_v2.SentEmail``) and publish
    what is due now, before SendEmail answers. Nothing for an email without a configuration set."""
    name = request.get("ConfigurationSetName")
    if not name:
        return
    backend = response.sesv2_backend
    config_set = backend.core_backend.config_sets[name]
    reasons = (config_set.suppression_options or {}).get("SuppressedReasons") or []
    outcomes = active_outcomes()
    email = _Email(
        backend.account_id,
        backend.region_name,
        str(name),
        frozenset(str(r) for r in reasons),
        mail_object(response, request, record.message_id, record.sent_at),
        record.sent_at,
        outcomes.copies,
        _state(backend),
    )
    planned = sorted(_plan(email, outcomes, response))
    now = _now()
    for item in [p for p in planned if p.due <= now]:
        _publish(item)
    later = [p for p in planned if p.due > now]
    if later:
        _publisher.add(later)
