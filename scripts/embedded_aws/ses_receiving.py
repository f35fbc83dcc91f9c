"""SES email receiving on the embedded AWS: deliver a raw message to the active receipt rule set and run
the actions of the rules that match, as SES documents them.

moto stores receipt rule sets and rules but never receives mail. ``receive_email`` plays SES's inbound
endpoint, reading the active rule set back through the emulator's SES API (the source of truth):

- A message over 40 MB, headers included, is refused (``EmailTooLargeError``)
  (https://docs.aws.amazon.com/ses/latest/APIReference/API_S3Action.html).
- Only the active rule set applies; with none, receiving is off
  (https://docs.aws.amazon.com/ses/latest/APIReference/API_SetActiveReceiptRuleSet.html). A rule runs
  only when ``Enabled`` (default false, https://docs.aws.amazon.com/ses/latest/APIReference/API_ReceiptRule.html)
  and one of its recipient conditions matches an envelope recipient: an address matches itself, a
  domain its addresses, ``.example.com`` the addresses of every subdomain of example.com, and a rule
  without conditions every address of the verified domains and their subdomains
  (https://docs.aws.amazon.com/ses/latest/dg/receiving-email-concepts.html, "Recipient-based control";
  receiving-email-receipt-rules-console-walkthrough.html). When no rule matches, SES rejects the
  message (receiving-email-concepts.html, "Email-receiving process"): ``ReceivedEmail.accepted`` is
  false and ``reason`` says why.
- Rules run in order, and a rule's actions in order (same page, step 4). The Stop action ends the
  rule set (https://docs.aws.amazon.com/ses/latest/dg/receiving-email-action-stop.html). A rule with
  ``TlsPolicy`` ``Require`` bounces a message that did not arrive over TLS (``tls=False``)
  (API_ReceiptRule); ``ScanEnabled`` false reports spam and virus verdicts as ``DISABLED``.
- S3 action: the message goes to ``BucketName`` under ``ObjectKeyPrefix`` + the message id
  (https://docs.aws.amazon.com/ses/latest/dg/receiving-email-action-s3.html;
  receiving-email-notifications-contents.html, ``objectKey``), written with PutObject on the emulator,
  if the bucket policy lets ``ses.amazonaws.com`` put objects for the rule
  (https://docs.aws.amazon.com/ses/latest/dg/receiving-email-permissions.html). ``KmsKeyArn``'s
  client-side encryption is not emulated: the object is stored in clear and the run says so.
- Lambda action: the event without the message body; ``Event`` goes to Lambda's event queue
  (``AsyncInvoker.submit``), ``RequestResponse`` runs at once (``FunctionRuntime.invoke``) and its
  answer's ``disposition`` ``STOP_RULE`` ends the rule, ``STOP_RULE_SET`` the rule set, anything else
  continues; there is a 30-second timeout on RequestResponse
  (https://docs.aws.amazon.com/ses/latest/dg/receiving-email-action-lambda.html). The function must
  be in the rule's Region and admit ``ses.amazonaws.com`` for the rule (receiving-email-permissions).
- SNS action: the notification with the message as ``content`` (UTF-8 or Base64); a message over
  150 KB bounces (https://docs.aws.amazon.com/ses/latest/dg/receiving-email-action-sns.html).
- Add header: later actions see the header (receiving-email-action-add-header.html). Bounce: recorded
  with its notification; no bounce message is sent. WorkMail and Connect are not emulated.
- An S3, Lambda, Stop or Bounce action with ``TopicArn`` publishes a notification without ``content``.
The pages do not say what SES does with the rest of a message when an action fails (a missing
permission, a function error or a timeout): here the failure is recorded in the run and the next
action runs. SES also adds trace headers (Received, Authentication-Results, X-SES-Spam-Verdict) to the
message it stores (receiving-email-concepts.html, "Email-receiving authentication"); the emulator
stores the message as it came, plus any Add header action's headers. IP address filters are not
emulated. The JSON shapes are ``ses_receipt_records``'s.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from embedded_aws.async_invoke import AsyncInvoker
from embedded_aws.base import Journal, arn_parts, client
from embedded_aws.clock import VirtualClock
from embedded_aws.errors import FunctionNotFoundError, ThrottledError
from embedded_aws.iam_policies import trust_allows
from embedded_aws.runtime import FunctionRuntime
from embedded_aws.ses_receipt_records import (
    ACTION_TYPES,
    NOTIFICATION_SUBJECT,
    ActionRun,
    ReceivedEmail,
    Verdicts,
    action_object,
    lambda_event,
    mail_object,
    new_message_id,
    notification,
    parse_headers,
    receipt_object,
    sns_encoding,
)

MAX_MESSAGE_BYTES = 40 * 1024 * 1024  # headers included (API_S3Action)
SNS_CONTENT_LIMIT = 150 * 1024  # larger emails bounce (receiving-email-action-sns.html)
REQUEST_RESPONSE_TIMEOUT = 30.0  # receiving-email-action-lambda.html
SES_PRINCIPAL = "ses.amazonaws.com"
CONTINUE, STOP_RULE, STOP_RULE_SET = "CONTINUE", "STOP_RULE", "STOP_RULE_SET"


__all__ = ["ActionRun", "EmailTooLargeError", "ReceivedEmail", "Verdicts", "receive_email"]


class EmailTooLargeError(ValueError):
    """The message is over SES's 40 MB limit (headers included); SES does not accept it."""


def recipient_matches(condition: str, address: str) -> bool:
    """Whether one recipient condition (address, domain or ``.domain`` for its subdomains) matches."""
    wanted, address = condition.strip().lower(), address.strip().lower()
    domain = address.rpartition("@")[2]
    if "@" in wanted:
        return wanted == address
    if wanted.startswith("."):
        return domain.endswith(wanted)
    return domain == wanted


def verified_domains(ses: Any) -> list[str]:
    """The account's domain identities whose verification succeeded (lowercase)."""
    listed = ses.list_identities(IdentityType="Domain").get("Identities", [])
    status = ses.get_identity_verification_attributes(Identities=listed)["VerificationAttributes"]
    return [d.lower() for d in listed if status.get(d, {}).get("VerificationStatus") == "Success"]


def rule_recipients(rule: dict[str, Any], recipients: Sequence[str], verified: list[str]) -> list[str]:
    """The envelope recipients ``rule`` applies to (none when it is disabled); a rule without
    conditions applies to the ``verified`` domains and their subdomains."""
    if not rule.get("Enabled"):
        return []
    conditions = rule.get("Recipients") or [c for d in verified for c in (d, "." + d)]
    return [r for r in recipients if any(recipient_matches(c, r) for c in conditions)]


def _described(exc: Exception) -> str:
    return f"{type(exc).__name__}: {getattr(exc, 'response', {}).get('Error', {}).get('Message') or exc}"


Step = tuple[ActionRun, str]  # an action's run, and CONTINUE, STOP_RULE or STOP_RULE_SET


@dataclass
class _Message:
    """One accepted message while its rules run (``rule`` and ``recipients``: the rule running now)."""

    endpoint: str
    region: str
    account: str
    rule_set: str
    content: bytes
    mail: dict[str, Any]
    verdicts: Verdicts
    received_at: float
    now: Callable[[], float]
    invoker: AsyncInvoker | None
    runtime: FunctionRuntime | None
    result: ReceivedEmail
    tls: bool
    rule: dict[str, Any] = field(default_factory=dict)
    recipients: list[str] = field(default_factory=list)

    def step(self, kind: str, outcome: str, detail: dict[str, Any], then: str = CONTINUE) -> Step:
        return ActionRun(str(self.rule["Name"]), kind, outcome, detail), then

    def context(self) -> dict[str, list[str]]:
        """The request context of SES's calls for the rule (receiving-email-permissions.html conditions)."""
        rule_arn = (
            f"arn:aws:ses:{self.region}:{self.account}:receipt-rule-set/{self.rule_set}"
            f":receipt-rule/{self.rule['Name']}"
        )
        context = {"aws:SourceArn": [rule_arn], "aws:SourceAccount": [self.account]}
        return {**context, "aws:SecureTransport": ["true"]}

    def receipt(self, action: dict[str, Any]) -> dict[str, Any]:
        scanned = bool(self.rule.get("ScanEnabled"))
        at = self.now()
        return receipt_object(self.verdicts, self.recipients, self.received_at, at, action, scanned=scanned)

    def notify(self, topic: str, receipt: dict[str, Any], content: bytes | None = None) -> str:
        """Publish a notification to ``topic``; its SNS message id."""
        body = json.dumps(notification(self.mail, receipt, content))
        sns = client("sns", self.endpoint, arn_parts(topic)[1])
        return str(sns.publish(TopicArn=topic, Subject=NOTIFICATION_SUBJECT, Message=body)["MessageId"])

    def alert(self, config: dict[str, Any], detail: dict[str, Any], receipt: dict[str, Any]) -> None:
        """The notification of an action with a ``TopicArn`` (only the SNS action's has ``content``)."""
        if config.get("TopicArn"):
            detail["notification"] = self.notify(str(config["TopicArn"]), receipt)

    # -- the actions -----------------------------------------------------------------------------
    def s3(self, config: dict[str, Any]) -> Step:
        bucket = str(config["BucketName"])
        key = str(config.get("ObjectKeyPrefix") or "") + self.result.message_id
        detail: dict[str, Any] = {"bucket": bucket, "key": key}
        s3 = client("s3", self.endpoint, self.region)
        try:
            policy = s3.get_bucket_policy(Bucket=bucket)["Policy"]
        except ClientError as exc:  # outcome: no bucket policy, so SES may not write (refused below)
            policy, detail["policy"] = None, _described(exc)
        if policy is None or not trust_allows(policy, SES_PRINCIPAL, self.context(), "s3:PutObject"):
            detail["error"] = (
                f"the policy of bucket {bucket} does not let {SES_PRINCIPAL} put this rule's mail"
            )
            return self.step("S3", "failed", detail)
        if config.get("KmsKeyArn"):
            detail["kms"] = "client-side encryption is not emulated: stored unencrypted"
        s3.put_object(Bucket=bucket, Key=key, Body=self.content)
        self.result.s3_objects.append((bucket, key))
        self.alert(
            config, detail, self.receipt(action_object("S3", config, bucketName=bucket, objectKey=key))
        )
        return self.step("S3", "done", detail)

    def lambda_(self, config: dict[str, Any]) -> Step:
        function = str(config["FunctionArn"])
        invocation = str(config.get("InvocationType") or "Event")
        detail: dict[str, Any] = {"function": function, "invocationType": invocation}
        refusal = self._lambda_refusal(function)
        if refusal is not None:
            return self.step("Lambda", "failed", {**detail, "error": refusal})
        receipt = self.receipt(action_object("Lambda", config))
        self.alert(config, detail, receipt)
        event = lambda_event(self.mail, receipt)
        if invocation == "Event":
            assert self.invoker is not None  # checked before any rule ran
            detail["request_id"] = self.invoker.submit(function, event)
            return self.step("Lambda", "done", detail)
        assert self.runtime is not None
        try:
            answer = self.runtime.invoke(function, event)
        except ThrottledError as exc:  # outcome: the action failed (recorded); the next action runs
            return self.step("Lambda", "failed", {**detail, "error": str(exc)})
        detail["request_id"] = answer.request_id
        if answer.ended_at - answer.started_at > REQUEST_RESPONSE_TIMEOUT:
            detail["error"] = f"no answer within SES's {REQUEST_RESPONSE_TIMEOUT:.0f}-second timeout"
            return self.step("Lambda", "failed", detail)
        if not answer.ok:
            return self.step("Lambda", "failed", {**detail, "error": answer.error_payload()})
        payload = answer.payload if isinstance(answer.payload, dict) else {}
        disposition = payload.get("disposition")
        detail["disposition"] = disposition if disposition in (STOP_RULE, STOP_RULE_SET) else CONTINUE
        return self.step("Lambda", "done", detail, detail["disposition"])

    def _lambda_refusal(self, function: str) -> str | None:
        if arn_parts(function)[1] != self.region:
            return f"{function} is not in {self.region}, the Region of the receipt rule"
        lam = client("lambda", self.endpoint, self.region)
        try:
            policy = lam.get_policy(FunctionName=function)["Policy"]
        except lam.exceptions.ResourceNotFoundException as exc:  # outcome: refused, reported in the run
            return _described(exc)
        if not trust_allows(policy, SES_PRINCIPAL, self.context(), "lambda:InvokeFunction"):
            return f"the policy of {function} does not let {SES_PRINCIPAL} invoke it for this rule"
        return None

    def sns(self, config: dict[str, Any]) -> Step:
        detail: dict[str, Any] = {"topic": str(config["TopicArn"])}
        if len(self.content) > SNS_CONTENT_LIMIT:
            detail["error"] = f"{len(self.content)} bytes: over the SNS action's 150 KB"
            return self.step("SNS", "bounced", detail, STOP_RULE_SET)
        receipt = self.receipt(action_object("SNS", config, encoding=sns_encoding(config)))
        detail["notification"] = self.notify(detail["topic"], receipt, self.content)
        return self.step("SNS", "done", detail)

    def stop(self, config: dict[str, Any]) -> Step:
        detail: dict[str, Any] = {"scope": str(config.get("Scope") or "RuleSet")}
        self.alert(config, detail, self.receipt(action_object("Stop", config)))
        return self.step("Stop", "done", detail, STOP_RULE_SET)

    def add_header(self, config: dict[str, Any]) -> Step:
        """Prepended to the message (unconfirmed: the page does not say where SES puts it)."""
        name, value = str(config["HeaderName"]), str(config["HeaderValue"])
        self.content = f"{name}: {value}\r\n".encode() + self.content
        # A new mail object: the events already handed over keep the one they were built with.
        self.mail = {**self.mail, "headers": [{"name": name, "value": value}, *self.mail["headers"]]}
        return self.step("AddHeader", "done", {"header": name})

    def bounce(self, config: dict[str, Any]) -> Step:
        detail: dict[str, Any] = {"smtpReplyCode": config.get("SmtpReplyCode")}
        self.alert(config, detail, self.receipt(action_object("Bounce", config)))
        return self.step("Bounce", "bounced", detail)

    def run(self, rule: dict[str, Any], recipients: list[str]) -> str:
        """Run one matched rule's actions in order; CONTINUE, or STOP_RULE_SET when the set ends here."""
        self.rule, self.recipients = rule, recipients
        if rule.get("TlsPolicy") == "Require" and not self.tls:
            run, then = self.step("TlsPolicy", "bounced", {"error": "not received over TLS"}, STOP_RULE_SET)
            self.result.actions.append(run)
            self.result.stopped_by = f"TlsPolicy of rule {rule['Name']}"
            return then
        runners: dict[str, Callable[[dict[str, Any]], Step]] = {
            "S3": self.s3,
            "Lambda": self.lambda_,
            "SNS": self.sns,
            "Stop": self.stop,
            "AddHeader": self.add_header,
            "Bounce": self.bounce,
        }
        for action in rule.get("Actions") or []:
            kind_key, config = next(iter(action.items()))
            kind = ACTION_TYPES.get(kind_key, kind_key)
            runner = runners.get(kind)
            try:
                run, then = runner(dict(config)) if runner else self.step(kind, "not emulated", {})
            except ClientError as exc:  # outcome: recorded as a failed action; the next one runs
                run, then = self.step(kind, "failed", {"error": _described(exc)})
            except FunctionNotFoundError as exc:  # outcome: recorded as a failed action; the next one runs
                run, then = self.step(kind, "failed", {"error": f"no function {exc}"})
            self.result.actions.append(run)
            if then == STOP_RULE_SET:
                self.result.stopped_by = f"{kind} action of rule {rule['Name']}"
                return STOP_RULE_SET
            if then == STOP_RULE:
                return CONTINUE
        return CONTINUE


def _needs(rules: list[tuple[dict[str, Any], list[str]]], invocation: str) -> bool:
    return any(
        str((action.get("LambdaAction") or {}).get("InvocationType") or "Event") == invocation
        for rule, _ in rules
        for action in rule.get("Actions") or []
        if "LambdaAction" in action
    )


def _finish(result: ReceivedEmail, journal: Journal | None) -> ReceivedEmail:
    if journal is not None:
        journal.record(
            "ses.received",
            message_id=result.message_id,
            accepted=result.accepted,
            reason=result.reason,
            rules=list(result.rules),
            actions=[(a.rule, a.type, a.outcome) for a in result.actions],
        )
    return result


def receive_email(
    endpoint: str,
    region: str,
    raw: bytes,
    *,
    recipients: Sequence[str],
    sender: str | None = None,
    invoker: AsyncInvoker | None = None,
    runtime: FunctionRuntime | None = None,
    clock: VirtualClock | None = None,
    journal: Journal | None = None,
    verdicts: Verdicts | None = None,
    tls: bool = True,
) -> ReceivedEmail:
    """Deliver ``raw`` (a MIME message) to the envelope ``recipients`` in ``region`` and run the active
    rule set's matching rules; ``sender`` is the envelope MAIL FROM (default: Return-Path, else From).

    ``invoker`` is needed when a matched rule has an ``Event`` Lambda action, ``runtime`` for a
    ``RequestResponse`` one (ValueError before anything runs otherwise).
    """
    if len(raw) > MAX_MESSAGE_BYTES:
        raise EmailTooLargeError(
            f"{len(raw)} bytes: SES accepts at most {MAX_MESSAGE_BYTES} (headers included)"
        )
    if not recipients:
        raise ValueError("a message needs at least one envelope recipient")
    now = clock.now if clock is not None else time.time
    result = ReceivedEmail(new_message_id())
    received_at = now()
    ses = client("ses", endpoint, region)
    active = ses.describe_active_receipt_rule_set()
    if "Metadata" not in active:
        result.reason = "no active receipt rule set: email receiving is disabled"
        return _finish(result, journal)
    rules = active.get("Rules", [])
    verified = (
        verified_domains(ses) if any(r.get("Enabled") and not r.get("Recipients") for r in rules) else []
    )
    matched = [(rule, rule_recipients(rule, recipients, verified)) for rule in rules]
    matched = [(rule, found) for rule, found in matched if found]
    if not matched:
        result.reason = "no enabled rule of the active rule set matches a recipient: SES rejects the message"
        return _finish(result, journal)
    if _needs(matched, "Event") and invoker is None:
        raise ValueError("a matched rule invokes a function with InvocationType Event: pass an AsyncInvoker")
    if _needs(matched, "RequestResponse") and runtime is None:
        raise ValueError("a matched rule invokes a function with RequestResponse: pass a FunctionRuntime")
    headers = parse_headers(raw)
    account = str(client("sts", endpoint, region).get_caller_identity()["Account"])
    message = _Message(
        endpoint,
        region,
        account,
        str(active["Metadata"]["Name"]),
        raw,
        mail_object(headers, result.message_id, sender, received_at, list(recipients)),
        verdicts or Verdicts(),
        received_at,
        now,
        invoker,
        runtime,
        result,
        tls,
    )
    result.accepted = True
    for rule, found in matched:
        result.rules.append(str(rule["Name"]))
        if message.run(rule, found) == STOP_RULE_SET:
            break
    return _finish(result, journal)
