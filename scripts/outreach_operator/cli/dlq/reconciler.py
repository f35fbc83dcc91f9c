"""A reconciler dead letter replayed: its event invoked again, only on this environment's reconcilers."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import boto3
from botocore.config import Config

from outreach_operator.cli import queue_messages as queue
from outreach_operator.cli.dlq.replay_queue import Handler
from outreach_operator.cli.output import Session
from outreach_operator.cli.targets import TargetError
from outreach_operator.errors import ReplayRefusedError

_LAMBDA_ARN = re.compile(
    r"^arn:(?P<partition>aws[\w-]*):lambda:(?P<region>[\w-]+):(?P<account>\d{12}):function:"
    r"(?P<name>[A-Za-z0-9_-]+)(?::(?P<qualifier>[A-Za-z0-9_$-]+))?$"
)


@dataclass(frozen=True)
class OwnFunctions:
    """The functions a reconciler replay may invoke: this environment's reconcilers (names or ARNs),
    in the session's region and the caller's account."""

    functions: tuple[str, ...]
    region: str | None
    account: Callable[[], str]

    def resolve(self, target: str) -> str:
        """The environment's function ``target`` (a name or an ARN) is: what to invoke. ``ReplayRefusedError``
        naming the target for anything else."""
        named = _LAMBDA_ARN.match(target)
        if named is None and target.startswith("arn:"):
            raise ReplayRefusedError(
                target, "not a Lambda function; only this environment's reconcilers are invoked"
            )
        if named is not None and named["qualifier"] not in (None, "$LATEST"):
            raise ReplayRefusedError(
                target, f"names version or alias {named['qualifier']}; only $LATEST is replayed"
            )
        for own in self.functions:
            if self._same(target, named, own):
                return own
        raise ReplayRefusedError(
            target,
            f"not one of this environment's reconcilers ({', '.join(self.functions)}); "
            "it is not invoked with these credentials",
        )

    def _same(self, target: str, named: re.Match[str] | None, own: str) -> bool:
        own_arn = _LAMBDA_ARN.match(own)
        if own_arn is not None:
            if named is None:
                return target == own_arn["name"]
            keys = ("partition", "region", "account", "name")
            return all(named[k] == own_arn[k] for k in keys)
        if named is None:
            return target == own
        return named["name"] == own and named["region"] == self.region and named["account"] == self.account()


def own_functions(s: Session) -> OwnFunctions:
    t = s.targets
    functions = tuple(f for f in (t.scrape_reconciler_function, t.email_reconciler_function) if f)
    if not functions:
        where = f"environment {t.env!r} has no reconciler outputs" if t.env else "no --env given"
        raise TargetError(
            f"the reconciler functions are unknown ({where}): pass --scrape-reconciler-function "
            "(and --email-reconciler-function), the only functions a replay invokes"
        )
    return OwnFunctions(functions=functions, region=s.region(), account=lambda: s.caller()["account"])


def _failed_run(message: dict[str, Any], override: str | None) -> tuple[str, bytes, str | None]:
    """The function to run again, its event and why it failed, from one reconciler dead letter.

    The DLQ gets two shapes: a Scheduler or EventBridge dead letter (the event as the body, the target in the
    ``TARGET_ARN`` attribute) and Lambda's on-failure record of a run whose retries ran out (the
    function in ``requestContext.functionArn``, the event in ``requestPayload``).
    https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-retain-records.html
    """
    try:
        record = json.loads(message["Body"])
    except ValueError:  # a body that is not JSON is not an on-failure record: read it as a dead letter
        record = None
    if (
        isinstance(record, dict)
        and isinstance(record.get("requestContext"), dict)
        and "requestPayload" in record
    ):
        context = record["requestContext"]
        function_arn = str(context.get("functionArn", ""))
        named = override or function_arn.removesuffix(":$LATEST")
        if not named:
            raise ValueError("on-failure record names no function (pass --function)")
        return named, json.dumps(record["requestPayload"]).encode(), context.get("condition")
    target = override or queue.attribute(message, "TARGET_ARN")
    if not target:
        raise ValueError("message has no TARGET_ARN attribute (pass --function)")
    return target, message["Body"].encode(), queue.attribute(message, "ERROR_CODE")


def reconciler_handler(own: OwnFunctions, function: str | None) -> Handler:
    lam = boto3.client(
        "lambda", config=Config(retries={"mode": "standard", "max_attempts": 3}, read_timeout=900)
    )

    def handle(message: dict[str, Any], dry_run: bool) -> dict[str, Any]:
        named, payload, error = _failed_run(message, function)
        target = own.resolve(named)
        outcome: dict[str, Any] = {
            "function": target,
            "rule": queue.attribute(message, "RULE_ARN"),
            "schedule": queue.attribute(message, "X-Amz-Scheduler-Schedule-Arn"),
            "error": error,
        }
        if dry_run:
            return outcome
        response = lam.invoke(FunctionName=target, InvocationType="RequestResponse", Payload=payload)
        if response.get("FunctionError"):
            raise RuntimeError(f"{target} failed again: {response['Payload'].read()[:300]!r}")
        return {**outcome, "status_code": response.get("StatusCode")}

    return handle
