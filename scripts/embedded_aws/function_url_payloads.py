"""A function URL's payloads: the HTTP request as Lambda's event (format 2.0), the answer as HTTP.

Request (https://docs.aws.amazon.com/lambda/latest/dg/urls-invocation.html, "Request payload format"):
``version`` "2.0", ``routeKey`` "$default", ``rawPath``, ``rawQueryString`` (without the ``?``),
``cookies`` (the Cookie header split into its pairs, which leave ``headers``), ``headers`` with
lower-case names and repeated headers joined by commas, ``queryStringParameters`` (repeated keys
joined by commas; absent without a query), ``requestContext`` (``accountId`` "anonymous" for a
``NONE`` URL, ``apiId``/``domainPrefix`` the URL id, ``domainName``, ``http.method``/``path``/
``protocol``/``sourceIp``/``userAgent``, ``requestId``, ``time``, ``timeEpoch``), ``body`` and
``isBase64Encoded``. A body whose Content-Type is not ``text/*`` or ``application/json`` is
base64-encoded (an HTML form's ``application/x-www-form-urlencoded`` body too), as Lambda does:
"If the content type of the request is binary, the body is base64-encoded" (same page); AWS's Lambda
team shows the rule as "unless Content-Type is application/json or text/*"
(https://speakerdeck.com/player/bf528d4f49d948b1b89ba21f3e262629, slide 15). The headers a URL adds
on AWS are there as well: ``host`` (the URL's domain), ``x-forwarded-for``/``-proto``/``-port`` and
``x-amzn-trace-id``.

Response ("Response payload format", same page): a JSON object with ``statusCode`` is the response
itself (``headers``, ``body``, ``isBase64Encoded``, ``cookies`` as ``set-cookie`` headers); anything
else the function returns is sent as it is, JSON-encoded, with status 200 and content-type
``application/json``. A response that does not fit the format is ``MalformedResponseError`` (the
URL answers 502, as for a function error).

Both payloads are bounded by Lambda's synchronous invocation quota, 6 MB each for request and
response (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html, "Invocation
payload"): a larger event is ``PayloadTooLargeError`` (413, Lambda's RequestTooLargeException,
https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html, Errors).
"""

from __future__ import annotations

import base64
import binascii
import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl

MAX_PAYLOAD_BYTES = 6 * 1024 * 1024
TEXT_TYPES = ("application/json",)


class PayloadTooLargeError(ValueError):
    """The event would exceed the 6 MB synchronous invocation payload (HTTP 413)."""


class MalformedResponseError(ValueError):
    """The function's answer is not a response the URL can send (HTTP 502)."""


@dataclass(frozen=True)
class UrlRequest:
    """One HTTP request as the URL received it."""

    method: str
    target: str  # path and query, as in the request line
    headers: Sequence[tuple[str, str]]
    body: bytes
    source_ip: str
    protocol: str = "HTTP/1.1"


@dataclass(frozen=True)
class UrlEndpoint:
    """The URL the request came to: its id, domain, region and auth type."""

    url_id: str
    domain: str
    auth_type: str


@dataclass
class UrlResponse:
    """What the URL sends back."""

    status: int
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""

    @classmethod
    def message(cls, status: int, text: str) -> UrlResponse:
        """A response of the URL itself (refusals, errors): ``{"Message": text}`` as JSON."""
        body = json.dumps({"Message": text}).encode()
        return cls(status, [("content-type", "application/json")], body)


def is_text(content_type: str | None) -> bool:
    """Whether Lambda passes a body of this Content-Type as text (else base64)."""
    if not content_type:
        return False
    media = content_type.split(";", 1)[0].strip().lower()
    return media.startswith("text/") or media in TEXT_TYPES


def _headers(request: UrlRequest, endpoint: UrlEndpoint, trace_id: str) -> tuple[dict[str, str], list[str]]:
    joined: dict[str, list[str]] = {}
    cookies: list[str] = []
    for name, value in request.headers:
        key = name.lower()
        if key == "cookie":
            cookies.extend(part.strip() for part in value.split(";") if part.strip())
            continue
        if key in ("host", "x-forwarded-for", "x-forwarded-proto", "x-forwarded-port"):
            continue  # set below, as the URL's front end does
        joined.setdefault(key, []).append(value)
    headers = {key: ",".join(values) for key, values in joined.items()}
    headers.update(
        {
            "host": endpoint.domain,
            "x-forwarded-for": request.source_ip,
            "x-forwarded-proto": "https",
            "x-forwarded-port": "443",
            "x-amzn-trace-id": trace_id,
        }
    )
    return headers, cookies


def request_event(
    request: UrlRequest, endpoint: UrlEndpoint, *, account_id: str, now: float, request_id: str
) -> dict[str, Any]:
    """The event Lambda passes the function for ``request``. Raises ``PayloadTooLargeError``."""
    path, _, query = request.target.partition("?")
    trace_id = f"Root=1-{int(now):08x}-{secrets.token_hex(12)}"
    headers, cookies = _headers(request, endpoint, trace_id)
    moment = datetime.fromtimestamp(now, tz=UTC)
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": path or "/",
        "rawQueryString": query,
        "headers": headers,
        "requestContext": {
            "accountId": "anonymous" if endpoint.auth_type == "NONE" else account_id,
            "apiId": endpoint.url_id,
            "domainName": endpoint.domain,
            "domainPrefix": endpoint.url_id,
            "http": {
                "method": request.method.upper(),
                "path": path or "/",
                "protocol": request.protocol,
                "sourceIp": request.source_ip,
                "userAgent": headers.get("user-agent", ""),
            },
            "requestId": request_id,
            "routeKey": "$default",
            "stage": "$default",
            "time": moment.strftime("%d/%b/%Y:%H:%M:%S +0000"),
            "timeEpoch": int(now * 1000),
        },
        "isBase64Encoded": False,
    }
    if cookies:
        event["cookies"] = cookies
    if query:
        parameters: dict[str, list[str]] = {}
        for key, value in parse_qsl(query, keep_blank_values=True):
            parameters.setdefault(key, []).append(value)
        event["queryStringParameters"] = {key: ",".join(values) for key, values in parameters.items()}
    if request.body:
        text = _as_text(request.body) if is_text(headers.get("content-type")) else None
        if text is None:
            event["body"] = base64.b64encode(request.body).decode("ascii")
            event["isBase64Encoded"] = True
        else:
            event["body"] = text
    if len(json.dumps(event).encode()) > MAX_PAYLOAD_BYTES:
        raise PayloadTooLargeError(f"Request must be smaller than {MAX_PAYLOAD_BYTES} bytes")
    return event


def _as_text(body: bytes) -> str | None:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:  # outcome: not the text its Content-Type claims; passed on base64-encoded
        return None


def _header_value(value: Any, name: str) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str | int | float):
        return str(value)
    raise MalformedResponseError(f"response header {name!r} is not a string")


def http_response(payload: Any) -> UrlResponse:
    """The HTTP response for what the function returned. Raises ``MalformedResponseError``."""
    if len(json.dumps(payload).encode()) > MAX_PAYLOAD_BYTES:
        raise MalformedResponseError("response payload is larger than 6 MB")
    if not isinstance(payload, dict) or "statusCode" not in payload:
        return UrlResponse(200, [("content-type", "application/json")], json.dumps(payload).encode())
    status = payload["statusCode"]
    if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
        raise MalformedResponseError(f"statusCode {status!r} is not an HTTP status")
    headers = payload.get("headers") or {}
    if not isinstance(headers, dict):
        raise MalformedResponseError("response headers are not an object")
    pairs = [(str(name).lower(), _header_value(value, str(name))) for name, value in headers.items()]
    cookies = payload.get("cookies") or []
    if not isinstance(cookies, list) or not all(isinstance(c, str) for c in cookies):
        raise MalformedResponseError("response cookies are not a list of strings")
    pairs.extend(("set-cookie", cookie) for cookie in cookies)
    body = payload.get("body")
    if body is None:
        data = b""
    elif not isinstance(body, str):
        raise MalformedResponseError("response body is not a string")
    elif payload.get("isBase64Encoded"):
        try:
            data = base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise MalformedResponseError("response body is not valid base64") from exc
    else:
        data = body.encode("utf-8")
    return UrlResponse(status, pairs, data)
