"""Unsubscribe endpoint: the Lambda function URL that a List-Unsubscribe link and one-click POST reach.

The function URL (auth type NONE) sends each request as payload format 2.0 and takes the response
object back (``statusCode``, ``headers``, ``body``, ``isBase64Encoded``); no cookie is read or set.
https://docs.aws.amazon.com/lambda/latest/dg/urls-invocation.html (request and response payloads).

- ``GET ?t=<token>``: the token is verified and a confirmation page shown; nothing is recorded, so a
  link scanner that fetches every link unsubscribes nobody.
- ``POST ?t=<token>`` with the body ``List-Unsubscribe=One-Click`` (RFC 8058; form-urlencoded or
  multipart/form-data, base64 in the payload or not): the token is verified, the address recorded
  ``unsubscribed`` in the contact ledger (source ``unsubscribe``; a repeat changes nothing), and the
  fan-out message queued to the SES-events queue, whose consumer cancels every open email to the
  address. Answered at once with the done page. From the moment the ledger write returns, the email
  worker refuses every send to the address, fan-out or not.
- Refused, with a plain page and nothing changed: a missing, malformed, forged or altered token (400),
  a POST without the one-click body (400), another method (405), a body over 4 KB (413).
- KMS, DynamoDB or SQS failing (the token's MAC cannot be checked, or the stop not recorded, or the
  fan-out not queued): 503 with a retry-later page, the error logged with its trace and counted
  (``UnsubscribeFailures``). A mail provider's POST is retried by the provider, a person clicks again;
  the recorded stop and the fan-out are idempotent, so a retry completes what the failed one began.
"""

from __future__ import annotations

import base64
import binascii
from datetime import UTC, datetime
from email import policy
from email.parser import BytesParser
from enum import StrEnum
from typing import Any
from urllib.parse import parse_qsl

from aws_lambda_powertools.utilities.typing import LambdaContext
from botocore.exceptions import BotoCoreError, ClientError

from outreach import clients, clock, config, contacts, ses_events
from outreach.errors import InvalidTokenError
from outreach.observability import MetricUnit, logger, metrics
from outreach.unsubscribe import pages
from outreach.unsubscribe.pages import Page
from outreach.unsubscribe.token import MAX_TOKEN_CHARS, TokenSubject, verify_token

MAX_BODY_BYTES = 4 * 1024
# The query is the token and little else; anything longer is no link this endpoint made.
_MAX_QUERY_CHARS = 2 * MAX_TOKEN_CHARS
_MAX_FIELDS = 20
_MAX_CONTENT_TYPE_CHARS = 256
ONE_CLICK = ("List-Unsubscribe", "One-Click")


class Outcome(StrEnum):
    PAGE_SHOWN = "PageShown"
    UNSUBSCRIBED = "Unsubscribed"
    ALREADY_UNSUBSCRIBED = "AlreadyUnsubscribed"
    TOKEN_REFUSED = "TokenRefused"
    REQUEST_REFUSED = "RequestRefused"
    METHOD_NOT_ALLOWED = "MethodNotAllowed"
    TOO_LARGE = "TooLarge"
    FAILED = "Failed"


_METRIC_BY_OUTCOME = {
    Outcome.PAGE_SHOWN: "UnsubscribePagesShown",
    Outcome.UNSUBSCRIBED: "Unsubscribes",
    Outcome.ALREADY_UNSUBSCRIBED: "UnsubscribesRepeated",
    Outcome.TOKEN_REFUSED: "UnsubscribeTokensRefused",
    Outcome.REQUEST_REFUSED: "UnsubscribeRequestsRefused",
    Outcome.METHOD_NOT_ALLOWED: "UnsubscribeRequestsRefused",
    Outcome.TOO_LARGE: "UnsubscribeRequestsRefused",
    Outcome.FAILED: "UnsubscribeFailures",
}


class _RequestRefusedError(Exception):
    """A request answered with an error page: its outcome, status and message."""

    def __init__(self, outcome: Outcome, status: int, message: str) -> None:
        super().__init__(message)
        self.outcome = outcome
        self.page = pages.error_page(status, message)


def _method(event: dict[str, Any]) -> str:
    """``requestContext.http.method`` upper-cased; empty when the request has none."""
    context = event.get("requestContext")
    http = context.get("http") if isinstance(context, dict) else None
    method = http.get("method") if isinstance(http, dict) else None
    return method.upper() if isinstance(method, str) else ""


def _header(event: dict[str, Any], name: str) -> str:
    headers = event.get("headers")
    value = headers.get(name, "") if isinstance(headers, dict) else ""
    return value if isinstance(value, str) else ""


def read_body(event: dict[str, Any]) -> bytes:
    """The request body's bytes (base64 decoded when the payload says so), at most ``MAX_BODY_BYTES``."""
    body = event.get("body")
    if body is None:
        return b""
    if not isinstance(body, str):
        raise _RequestRefusedError(Outcome.REQUEST_REFUSED, 400, "The request body could not be read.")
    # Four base64 characters carry three bytes: a longer text cannot decode to a body in bounds.
    encoded = event.get("isBase64Encoded") is True
    raw = body.encode("utf-8", errors="surrogatepass")
    size = len(body) if encoded else len(raw)
    if size > ((MAX_BODY_BYTES // 3 + 1) * 4 if encoded else MAX_BODY_BYTES):
        raise _RequestRefusedError(
            Outcome.TOO_LARGE, 413, "The request is larger than an unsubscribe request is."
        )
    if not encoded:
        return raw
    try:
        data = base64.b64decode(body, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise _RequestRefusedError(
            Outcome.REQUEST_REFUSED, 400, "The request body could not be read."
        ) from exc
    if len(data) > MAX_BODY_BYTES:
        raise _RequestRefusedError(
            Outcome.TOO_LARGE, 413, "The request is larger than an unsubscribe request is."
        )
    return data


def read_token(event: dict[str, Any]) -> str:
    """The one ``t`` of the query string; a missing, repeated or oversized one is refused."""
    query = event.get("rawQueryString", "")
    if not isinstance(query, str) or len(query) > _MAX_QUERY_CHARS:
        raise _RequestRefusedError(Outcome.TOKEN_REFUSED, 400, "This unsubscribe link is not valid.")
    try:
        tokens = [value for name, value in parse_qsl(query, max_num_fields=_MAX_FIELDS) if name == "t"]
    except ValueError as exc:
        raise _RequestRefusedError(Outcome.TOKEN_REFUSED, 400, "This unsubscribe link is not valid.") from exc
    if len(tokens) != 1 or not tokens[0] or len(tokens[0]) > MAX_TOKEN_CHARS:
        raise _RequestRefusedError(Outcome.TOKEN_REFUSED, 400, "This unsubscribe link is not valid.")
    return tokens[0]


def _form_fields(content_type: str, body: bytes) -> list[tuple[str, str]]:
    """The name/value pairs of a form body, form-urlencoded or multipart/form-data (RFC 7578)."""
    if content_type.lower().startswith("multipart/form-data"):
        if len(content_type) > _MAX_CONTENT_TYPE_CHARS or "\r" in content_type or "\n" in content_type:
            return []
        message = BytesParser(policy=policy.default).parsebytes(
            b"Content-Type: " + content_type.encode("latin-1", errors="replace") + b"\r\n\r\n" + body
        )
        if not message.is_multipart():
            return []
        fields: list[tuple[str, str]] = []
        for part in list(message.iter_parts())[:_MAX_FIELDS]:
            name = part.get_param("name", header="content-disposition")
            payload = part.get_payload(decode=True)
            if isinstance(name, str) and isinstance(payload, bytes):
                fields.append((name, payload.decode("utf-8", errors="replace").strip()))
        return fields
    try:
        return parse_qsl(body.decode("utf-8"), keep_blank_values=True, max_num_fields=_MAX_FIELDS)
    except (UnicodeDecodeError, ValueError):  # outcome: no form fields, so the POST is refused with 400
        return []


def is_one_click(event: dict[str, Any], body: bytes) -> bool:
    """Whether the body holds ``List-Unsubscribe=One-Click`` (RFC 8058 section 3.1)."""
    return ONE_CLICK in _form_fields(_header(event, "content-type"), body)


def _verify(token: str, settings: config.UnsubscribeSettings) -> TokenSubject:
    try:
        return verify_token(settings.key_id, token)
    except InvalidTokenError as exc:
        logger.warning("unsubscribe token refused", extra={"reason": exc.reason})
        raise _RequestRefusedError(Outcome.TOKEN_REFUSED, 400, "This unsubscribe link is not valid.") from exc


def _unsubscribe(subject: TokenSubject, settings: config.UnsubscribeSettings) -> Outcome:
    """Record the stop, then queue the fan-out (always: a retry after a failed send completes it)."""
    at = datetime.fromtimestamp(clock.now(), UTC).replace(microsecond=0)
    raised = contacts.record_stop(
        contacts.address_key(subject.address),
        contacts.State.UNSUBSCRIBED,
        at=at,
        why=ses_events.why_unsubscribed(subject.campaign_id, subject.step),
        source=contacts.Source.UNSUBSCRIBE,
        campaign_id=subject.campaign_id,
    )
    clients.sqs().send_message(
        QueueUrl=settings.contact_events_queue_url,
        MessageBody=ses_events.unsubscribe_message(subject.campaign_id, subject.step, subject.address, at),
    )
    return Outcome.UNSUBSCRIBED if raised else Outcome.ALREADY_UNSUBSCRIBED


def handle(event: dict[str, Any], settings: config.UnsubscribeSettings) -> tuple[Outcome, Page]:
    """The outcome and page of one request; ``_RequestRefusedError`` for one answered with an error page."""
    method = _method(event)
    if method not in {"GET", "POST"}:
        raise _RequestRefusedError(
            Outcome.METHOD_NOT_ALLOWED, 405, "Open the link from the email to unsubscribe."
        )
    body = read_body(event)
    token = read_token(event)
    if method == "GET":
        subject = _verify(token, settings)
        return Outcome.PAGE_SHOWN, pages.confirmation_page(token, subject.address)
    if not is_one_click(event, body):
        raise _RequestRefusedError(Outcome.REQUEST_REFUSED, 400, "This is not an unsubscribe request.")
    subject = _verify(token, settings)
    logger.append_keys(campaign_id=subject.campaign_id, step=subject.step)
    return _unsubscribe(subject, settings), pages.done_page(subject.address)


def _response(page: Page, outcome: Outcome) -> dict[str, Any]:
    headers = dict(pages.HEADERS)
    if outcome is Outcome.METHOD_NOT_ALLOWED:
        headers["allow"] = "GET, POST"
    if outcome is Outcome.FAILED:
        headers["retry-after"] = "60"
    return {"statusCode": page.status, "headers": headers, "body": page.html, "isBase64Encoded": False}


@metrics.log_metrics
@logger.inject_lambda_context
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    settings = config.for_unsubscribe()
    try:
        outcome, page = handle(event, settings)
    except (
        _RequestRefusedError
    ) as refusal:  # outcome: the refusal's error page (400/405/413), nothing recorded
        outcome, page = refusal.outcome, refusal.page
    except (ClientError, BotoCoreError):
        # outcome: 503 answered at once (RFC 8058 wants an answer), the error logged with its trace and
        # counted as UnsubscribeFailures for the alarm; nothing half-done stays wrong, since the stop and
        # the fan-out are idempotent and the retry by the provider or the person completes them.
        logger.exception("unsubscribe failed: KMS, DynamoDB or SQS did not answer")
        outcome, page = Outcome.FAILED, pages.error_page(503, "We could not record this right now.")
    finally:
        logger.remove_keys(["campaign_id", "step"])
    metrics.add_metric(name=_METRIC_BY_OUTCOME[outcome], unit=MetricUnit.Count, value=1)
    logger.info("unsubscribe request", extra={"outcome": outcome.value, "status": page.status})
    return _response(page, outcome)
