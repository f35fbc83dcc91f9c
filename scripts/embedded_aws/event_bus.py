"""EventBridge event-pattern rules on the embedded AWS: an event reaches the targets of the enabled rules
whose pattern it matches, as the event JSON, and a Lambda target through Lambda's event queue.

moto 5.2.5 hands every PutEvents event to each rule of the bus (``Rule.send_to_targets``) and gets
this wrong in ways a rule -> SQS -> Lambda chain meets:

- A rule without an event pattern matches every event (moto reads a missing pattern as "match all"),
  and a DISABLED rule delivers too. Rules are based either on an event pattern or on a schedule
  (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rules.html); a disabled rule does not
  match events (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-delete-rule.html). Since a
  scheduled rule's Lambda target is one moto cannot deliver to (next point), any PutEvents on a bus
  with a scheduled Lambda rule (the reconcilers') failed as a whole with HTTP 500.
- Lambda targets raise NotImplementedError. EventBridge invokes a Lambda target asynchronously
  (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async.html), allowed by the function's
  resource-based policy (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-use-resource-based.html).
  Here the invocation is kept for ``event_rule_invoker``, which hands it to the emulator's
  ``AsyncInvoker`` as schedules are (moto's own push to Lambda stays off, see ``server``).
- The SQS message is rendered through a text template: it loses ``account``, one of the fields every
  event has (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-events.html), a value that
  contains ``<id>``, ``<time>``, ``<source>``, ``<region>``, ``<detail-type>`` or ``<resources>`` (an
  email subject, say) has the event's own field pasted into it, and a ``"`` in ``source`` or
  ``detail-type`` breaks the JSON. A target's ``Input`` and ``InputPath`` are ignored. Here the body
  is the event JSON unchanged, or the target's ``Input`` text, or the part ``InputPath`` selects.
- The queue's policy is never read. EventBridge may send to a queue only where the queue policy
  allows ``events.amazonaws.com`` ``sqs:SendMessage`` (eb-use-resource-based.html#eb-sqs-permissions);
  a missing permission or queue is not retried: the event goes to the target's dead-letter queue at
  once, if it has one, with the documented attributes, else it is dropped
  (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html). The dead-letter queue
  needs the same permission. A policy is evaluated conservatively (``iam_policies.trust_allows`` on
  the statements whose Resource names the queue): ``Principal: {"AWS": "*"}`` grants nothing here.
- Matching flattens the event with dotted keys (``{"a.b": 1}`` matches a pattern on ``a`` -> ``b``),
  compares JSON ``true`` with ``1``, and applies ``numeric`` to booleans, where "numeric matching
  works with values that are JSON numbers"
  (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns-content-based-filtering.html).
  Here patterns are matched by ``patterns.matches`` (the matcher of Lambda filters and Pipes: nested,
  type-exact, arrays matching on a non-empty intersection, eb-event-patterns-arrays.html); a pattern
  with an operator it does not implement (``cidr``, ``wildcard``) falls back to moto's matcher.
  Known difference left: EventBridge compares numbers by their string representation (300 and 300.0
  differ, eb-event-patterns.html); here by value.

Other target kinds (CloudWatch Logs, archives, other buses) keep moto's delivery; a target neither
handles is recorded as ``unsupported`` instead of failing the PutEvents. Every delivery is recorded
(``bus_deliveries``), and ``deliver_event`` lets the emulator's own services (SES event publishing)
put an event with a given id, once or more. Installed by ``support_event_pattern_rules`` (idempotent).
"""

from __future__ import annotations

import copy
import json
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from embedded_aws.base import arn_parts
from embedded_aws.iam_policies import arn_like, trust_allows
from embedded_aws.patterns import PatternError, matches

_PATCHED = "__outreach_event_pattern_rules__"
_STATE = "_outreach_event_bus"
_LOCK = threading.Lock()
_ENABLED = ("ENABLED", "ENABLED_WITH_ALL_CLOUDTRAIL_MANAGEMENT_EVENTS")
_PRINCIPAL = "events.amazonaws.com"


@dataclass(frozen=True)
class BusDelivery:
    """One event handed to one target: ``outcome`` is ``delivered`` (SQS), ``handed_to_lambda``,
    ``dead_lettered``, ``dropped``, ``moto`` (a target moto delivers) or ``unsupported``."""

    event_id: str
    rule_arn: str
    target_arn: str
    outcome: str
    reason: str = ""


@dataclass(frozen=True)
class RuleInvocation:
    """An event a rule sends to a Lambda target, waiting for ``event_rule_invoker``."""

    rule_arn: str
    target: dict[str, Any]
    event: Any


def _state(backend: Any) -> dict[str, list[Any]]:
    """Per events backend (account and region), created on first use; moto's reset drops it."""
    with _LOCK:
        state = backend.__dict__.get(_STATE)
        if state is None:
            state = {"deliveries": [], "invocations": []}
            backend.__dict__[_STATE] = state
        return state  # type: ignore[no-any-return]


def _backend(region: str, account_id: str | None) -> Any:
    from moto.core.models import DEFAULT_ACCOUNT_ID
    from moto.events.models import events_backends

    return events_backends[account_id or DEFAULT_ACCOUNT_ID][region]


def bus_deliveries(region: str, account_id: str | None = None) -> list[BusDelivery]:
    """Every hand-over of an event to a target in ``region``, in order."""
    state = _state(_backend(region, account_id))
    with _LOCK:
        return list(state["deliveries"])


def take_rule_invocations(region: str, account_id: str | None = None) -> list[RuleInvocation]:
    """The Lambda invocations rules made since the last call (each is returned once)."""
    state = _state(_backend(region, account_id))
    with _LOCK:
        taken, state["invocations"] = state["invocations"], []
    return taken


def _record(rule: Any, event: dict[str, Any], target: dict[str, Any], outcome: str, reason: str = "") -> None:
    state = _state(_backend(rule.region_name, rule.account_id))
    entry = BusDelivery(str(event.get("id", "")), rule.arn, str(target.get("Arn", "")), outcome, reason)
    with _LOCK:
        state["deliveries"].append(entry)


# -- the event as AWS writes it ------------------------------------------------------------------------
def event_time(moment: float) -> str:
    """An event's ``time``: UTC to the second, as in eb-events.html (``2017-12-22T18:43:48Z``)."""
    return datetime.fromtimestamp(moment, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _as_aws_event(moto_event: dict[str, Any]) -> dict[str, Any]:
    """moto's per-rule event message in the documented form: ISO ``time``, no ``ingestion-time``."""
    event = {k: v for k, v in moto_event.items() if k != "ingestion-time"}
    when = event.get("time")
    if isinstance(when, (int, float)) and not isinstance(when, bool):
        event["time"] = event_time(float(when))
    elif isinstance(when, datetime):
        event["time"] = event_time(when.replace(tzinfo=when.tzinfo or UTC).timestamp())
    return event


def _matches(rule: Any, event: dict[str, Any]) -> bool:
    pattern = rule.event_pattern.get_pattern()
    try:
        return matches(pattern, event)
    except PatternError:
        # outcome: an operator patterns.matches lacks (cidr, wildcard): moto's matcher decides
        return bool(rule.event_pattern.matches_event(copy.deepcopy(event)))


def _payload(target: dict[str, Any], event: dict[str, Any]) -> str:
    """What the target receives: the event JSON, or its ``Input``, ``InputPath`` or ``InputTransformer``
    (https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_Target.html)."""
    if target.get("Input") is not None:
        return str(target["Input"])
    if target.get("InputPath"):
        from jsonpath_ng.ext import parse  # type: ignore[attr-defined]

        found = parse(target["InputPath"]).find(event)
        return json.dumps(found[0].value) if found else "null"
    transformer = target.get("InputTransformer")
    if transformer:
        from moto.events.utils import EventTemplateParser

        shaped = EventTemplateParser.parse(
            input_template=transformer.get("InputTemplate"),
            input_paths_map=transformer.get("InputPathsMap", {}),
            event={**event, "ingestion-time": 0.0},  # type: ignore[typeddict-item]
        )
        return json.dumps(shaped)
    return json.dumps(event)


# -- SQS targets ---------------------------------------------------------------------------------------
def _queue_refusal(rule: Any, queue_arn: str) -> tuple[str, str] | None:
    """Why EventBridge may not send to the queue for this rule, or None (eb-sqs-permissions)."""
    from moto.sqs.exceptions import QueueDoesNotExist
    from moto.sqs.models import sqs_backends

    _, region, account, name = arn_parts(queue_arn)
    try:
        queue = sqs_backends[account][region].get_queue(name)
    except QueueDoesNotExist:
        return ("ResourceNotFoundException", f"queue does not exist: {queue_arn}")
    policy = queue.policy
    document = json.loads(policy) if isinstance(policy, str) and policy else (policy or {})
    statements = document.get("Statement", []) if isinstance(document, dict) else []
    if isinstance(statements, dict):
        statements = [statements]
    naming = [s for s in statements if _names_resource(s.get("Resource"), queue_arn)]
    # EventBridge calls SQS over TLS, on behalf of this rule of this account.
    context = {
        "aws:SourceArn": [rule.arn],
        "aws:SourceAccount": [rule.account_id],
        "aws:SecureTransport": ["true"],
    }
    if trust_allows({"Statement": naming}, _PRINCIPAL, context, action="sqs:SendMessage"):
        return None
    return ("AccessDeniedException", f"the policy of {queue_arn} does not allow {_PRINCIPAL} for {rule.arn}")


def _names_resource(resource: Any, arn: str) -> bool:
    values = resource if isinstance(resource, list) else [resource]
    return any(value == "*" or (isinstance(value, str) and arn_like(value, arn)) for value in values)


def _send(queue_arn: str, body: str, group_id: str | None, attributes: dict[str, str]) -> None:
    from moto.sqs.models import sqs_backends

    _, region, account, name = arn_parts(queue_arn)
    sqs_backends[account][region].send_message(
        name,
        body,
        message_attributes={k: {"DataType": "String", "StringValue": v} for k, v in attributes.items()},
        group_id=group_id,
    )


def _to_queue(rule: Any, target: dict[str, Any], event: dict[str, Any], body: str) -> None:
    refusal = _queue_refusal(rule, target["Arn"])
    if refusal is None:
        group_id = (target.get("SqsParameters") or {}).get("MessageGroupId")
        _send(target["Arn"], body, group_id, {})
        _record(rule, event, target, "delivered")
        return
    _dead_letter(rule, target, event, body, refusal)


def _dead_letter(
    rule: Any, target: dict[str, Any], event: dict[str, Any], body: str, reason: tuple[str, str]
) -> None:
    """A refusal is not retried: to the target's DLQ with eb-rule-dlq's attributes, else dropped."""
    dead_letter = (target.get("DeadLetterConfig") or {}).get("Arn")
    if not dead_letter:
        _record(rule, event, target, "dropped", f"{reason[0]}: {reason[1]}")
        return
    refused = _queue_refusal(rule, dead_letter)
    if refused is not None:
        _record(rule, event, target, "dropped", f"dead-letter queue refused: {refused[0]}: {refused[1]}")
        return
    attributes = {
        "ERROR_CODE": reason[0],
        "ERROR_MESSAGE": reason[1],
        "EXHAUSTED_RETRY_CONDITION": "MaximumRetryAttempts",
        "RETRY_ATTEMPTS": "0",
        "RULE_ARN": rule.arn,
        "TARGET_ARN": target["Arn"],
    }
    _send(dead_letter, body, None, attributes)
    _record(rule, event, target, "dead_lettered", f"{reason[0]}: {reason[1]}")


# -- one rule ------------------------------------------------------------------------------------------
def _deliver_to_rule(rule: Any, event: dict[str, Any], original: Any) -> None:
    if rule.state not in _ENABLED or rule.event_pattern.dump() is None:
        return
    if not _matches(rule, event):
        return
    others = []
    for target in list(rule.targets):
        service = arn_parts(target["Arn"])[0]
        if service == "sqs":
            _to_queue(rule, target, event, _payload(target, event))
        elif service == "lambda":
            payload = _payload(target, event)
            try:
                parsed: Any = json.loads(payload)
            except json.JSONDecodeError:
                # outcome: Lambda gets the text as it is (PutTargets only accepts JSON Input anyway)
                parsed = payload
            state = _state(_backend(rule.region_name, rule.account_id))
            with _LOCK:
                state["invocations"].append(RuleInvocation(rule.arn, dict(target), parsed))
            _record(rule, event, target, "handed_to_lambda")
        else:
            others.append(target)
    if others:
        _moto_delivers(rule, others, event, original)


def _moto_delivers(rule: Any, targets: list[dict[str, Any]], event: dict[str, Any], original: Any) -> None:
    """The targets moto knows (logs, archives, other buses) get moto's delivery, already matched."""
    from moto.core.utils import unix_time
    from moto.events.models import EventPattern

    stand_in = copy.copy(rule)
    stand_in.event_pattern = EventPattern(None, {})
    moto_event = {**copy.deepcopy(event), "ingestion-time": unix_time()}
    try:
        moment = datetime.strptime(str(event.get("time")), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        moto_event["time"] = moment.timestamp()
    except ValueError:
        # outcome: a time in another form: moto stamps the delivery with its clock instead
        moto_event["time"] = unix_time()
    for target in targets:
        stand_in.targets = [target]
        try:
            original(stand_in, moto_event)
        except NotImplementedError:
            # outcome: recorded as unsupported (bus_deliveries); the other targets still get the event
            _record(rule, event, target, "unsupported", "moto has no delivery for this target type")
            continue
        _record(rule, event, target, "moto")


def deliver_event(account_id: str, region: str, bus: str, event: dict[str, Any], *, copies: int = 1) -> None:
    """Put ``event`` (a complete event, its ``id`` set) on ``bus``: every matching rule's targets get it
    ``copies`` times. Raises moto's ResourceNotFoundException for a bus that does not exist."""
    from moto.events.models import Rule

    support_event_pattern_rules()
    backend = _backend(region, account_id)
    rules = list(backend._get_event_bus(bus.split("/")[-1]).rules.values())
    original = Rule.__dict__["send_to_targets"].__wrapped__
    for _ in range(copies):
        for rule in rules:
            _deliver_to_rule(rule, event, original)


def support_event_pattern_rules() -> None:
    """Install the delivery on moto's events rules (in-process and server mode). Idempotent."""
    from moto.events.models import Rule

    if getattr(Rule, _PATCHED, False):
        return
    original = Rule.send_to_targets

    def send_to_targets(self: Any, original_event: Any, transform_input: bool = True) -> None:
        if not transform_input:  # an archive's replay: moto's own path
            original(self, original_event, transform_input)
            return
        _deliver_to_rule(self, _as_aws_event(dict(original_event)), original)

    send_to_targets.__wrapped__ = original  # type: ignore[attr-defined]
    Rule.send_to_targets = send_to_targets  # type: ignore[method-assign]
    setattr(Rule, _PATCHED, True)
