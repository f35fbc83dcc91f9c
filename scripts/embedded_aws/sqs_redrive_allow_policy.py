"""A dead-letter queue's RedriveAllowPolicy for the embedded AWS: kept, returned, checked and enforced.

moto stores a ``RedriveAllowPolicy`` given to CreateQueue or SetQueueAttributes, but GetQueueAttributes
never returns it (it is not among the attributes moto lists) and nothing reads it. The AWS provider
creates a queue and then waits until GetQueueAttributes shows the attributes it sent, so on moto an
``aws_sqs_queue`` with ``redrive_allow_policy`` waits until it times out.

SQS (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SetQueueAttributes.html,
API_GetQueueAttributes.html, and the developer guide's sqs-dead-letter-queues.html) defines the policy
as a JSON object: ``redrivePermission`` is ``allowAll`` (the default), ``denyAll`` or ``byQueue``;
``sourceQueueArns`` lists up to 10 source queues and is given with ``byQueue`` only. It says which
source queues may name this queue as their dead-letter queue. Here the policy is:

- returned by GetQueueAttributes (``All`` or by name), exactly as it was set;
- checked when it is set (``InvalidAttributeValue`` for a policy outside those rules);
- enforced when a queue's RedrivePolicy names a dead-letter queue that does not allow it
  (``InvalidParameterValue``; the exact error AWS returns there is unconfirmed, refusing is what the
  documented permission means).

An empty string removes the policy, as for the queue's other policies.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

ATTRIBUTE = "RedriveAllowPolicy"
PERMISSIONS = frozenset({"allowAll", "denyAll", "byQueue"})
MAX_SOURCE_QUEUES = 10
_PATCHED = "__outreach_redrive_allow__"


class RedriveAllowPolicyError(ValueError):
    """A RedriveAllowPolicy that SQS does not accept."""


def parse(policy: str) -> dict[str, Any]:
    """The policy as a dict, or RedriveAllowPolicyError saying which rule it breaks."""
    try:
        document = json.loads(policy)
    except ValueError as exc:
        raise RedriveAllowPolicyError(f"{ATTRIBUTE} is not JSON") from exc
    if not isinstance(document, dict) or set(document) - {"redrivePermission", "sourceQueueArns"}:
        raise RedriveAllowPolicyError(f"{ATTRIBUTE} has keys other than redrivePermission, sourceQueueArns")
    permission = document.get("redrivePermission")
    if permission not in PERMISSIONS:
        raise RedriveAllowPolicyError(f"redrivePermission must be one of {sorted(PERMISSIONS)}")
    sources = document.get("sourceQueueArns")
    if permission != "byQueue":
        if sources is not None:
            raise RedriveAllowPolicyError("sourceQueueArns is given with redrivePermission byQueue only")
        return document
    if not isinstance(sources, list) or not 1 <= len(sources) <= MAX_SOURCE_QUEUES:
        raise RedriveAllowPolicyError(f"byQueue needs 1 to {MAX_SOURCE_QUEUES} sourceQueueArns")
    if not all(isinstance(arn, str) and arn.startswith("arn:") for arn in sources):
        raise RedriveAllowPolicyError("sourceQueueArns must be queue ARNs")
    return document


def allows(policy: str | None, source_arn: str) -> bool:
    """Whether a dead-letter queue with ``policy`` accepts ``source_arn`` as a source queue."""
    if policy is None:
        return True
    document = parse(policy)
    permission = document["redrivePermission"]
    if permission == "byQueue":
        return source_arn in document["sourceQueueArns"]
    return bool(permission == "allowAll")


def _checking_set(original: Callable[..., None]) -> Callable[..., None]:
    @functools.wraps(original)
    def _set_attributes(self: Any, attributes: dict[str, Any], now: float | None = None) -> None:
        from moto.sqs.exceptions import InvalidAttributeValue

        if ATTRIBUTE in attributes:
            value = attributes[ATTRIBUTE]
            if value in ("", None):
                attributes = {**attributes, ATTRIBUTE: None}
            else:
                try:
                    parse(str(value))
                except RedriveAllowPolicyError as exc:
                    raise InvalidAttributeValue(ATTRIBUTE) from exc
        original(self, attributes, now)

    setattr(_set_attributes, _PATCHED, True)
    return _set_attributes


def _enforcing_dlq(original: Callable[..., None]) -> Callable[..., None]:
    @functools.wraps(original)
    def _setup_dlq(self: Any, policy: Any) -> None:
        from moto.sqs.exceptions import InvalidParameterValue

        before = (getattr(self, "redrive_policy", None), self.dead_letter_queue)
        original(self, policy)
        target = self.dead_letter_queue
        if target is not None and not allows(target.redrive_allow_policy, self.queue_arn):
            self.redrive_policy, self.dead_letter_queue = before
            raise InvalidParameterValue(
                f"Value {policy} for parameter RedrivePolicy is invalid. Reason: the dead-letter "
                f"queue's {ATTRIBUTE} does not allow {self.queue_arn} as a source queue."
            )

    setattr(_setup_dlq, _PATCHED, True)
    return _setup_dlq


def keep_redrive_allow_policies() -> None:
    """Patch moto's SQS queue model to keep, return, check and enforce the policy. Idempotent."""
    from moto.sqs.models import Queue

    if getattr(Queue._set_attributes, _PATCHED, False):
        return
    # A class-level default: a queue created without the policy has none, and the attribute listing
    # (which reads every listed name from the queue) skips it.
    setattr(Queue, "redrive_allow_policy", None)  # noqa: B010 (moto's Queue declares no such attribute)
    Queue.BASE_ATTRIBUTES = [*Queue.BASE_ATTRIBUTES, ATTRIBUTE]
    Queue._set_attributes = _checking_set(Queue._set_attributes)  # type: ignore[method-assign]
    Queue._setup_dlq = _enforcing_dlq(Queue._setup_dlq)  # type: ignore[method-assign]
