"""Lambda function URLs on loopback: the payload format 2.0 event, the response format, the 403, 413 and 502.

AWS pages: https://docs.aws.amazon.com/lambda/latest/dg/urls-invocation.html (request and response
payloads), https://docs.aws.amazon.com/lambda/latest/dg/urls-auth.html (AuthType NONE needs
lambda:InvokeFunctionUrl and, since October 2025, lambda:InvokeFunction for "*"),
https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html (6 MB invocation payload).
"""

from __future__ import annotations

import base64
import http.client
import json
import os
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from embedded_aws.clock import VirtualClock
from embedded_aws.cloud import LocalCloud
from embedded_aws.errors import UnknownFunctionUrlError
from embedded_aws.function_url_payloads import MAX_PAYLOAD_BYTES
from embedded_aws.runtime import FunctionRuntime
from tests.embedded_aws.conftest import Lab, wait_for

pytestmark = pytest.mark.e2e

# Records the event it got (and its own pid), then answers as the query's "answer" asks.
URL_HANDLER = """
import base64, fcntl, json, os

def handler(event, context):
    with open(os.environ["RECORD_PATH"], "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.write(json.dumps({"pid": os.getpid(), "event": event}) + "\\n")
    answer = (event.get("queryStringParameters") or {}).get("answer", "custom")
    if answer == "custom":
        return {"statusCode": 201, "headers": {"X-Reply": "yes", "Content-Type": "text/plain"},
                "body": "created", "cookies": ["a=1; Max-Age=60", "b=2"]}
    if answer == "object":
        return {"message": "hi"}
    if answer == "string":
        return "Hello, world!"
    if answer == "binary":
        return {"statusCode": 200, "headers": {"content-type": "application/octet-stream"},
                "body": base64.b64encode(bytes(range(256))).decode(), "isBase64Encoded": True}
    if answer == "malformed":
        return {"statusCode": "two hundred"}
    raise RuntimeError("asked to fail")
"""


@pytest.fixture
def cloud(lab: Lab, runtime: FunctionRuntime, clock: VirtualClock) -> Iterator[LocalCloud]:
    started = LocalCloud(lab.endpoint, clock, runtime, refresh_real_seconds=0.2).start()
    yield started
    started.stop()


def _url_function(lab: Lab, name: str, *, invoke_condition: dict[str, Any] | None = None) -> str:
    """A function with a NONE URL and the two statements AWS requires; returns the applied URL."""
    lab.function(name, URL_HANDLER)
    url: str = lab.lam.create_function_url_config(FunctionName=name, AuthType="NONE")["FunctionUrl"]
    lab.lam.add_permission(
        FunctionName=name,
        StatementId="FunctionURLAllowPublicAccess",
        Action="lambda:InvokeFunctionUrl",
        Principal="*",
        FunctionUrlAuthType="NONE",
    )
    lab.lam.add_permission(
        FunctionName=name,
        StatementId="FunctionURLInvokeAllowPublicAccess",
        Action="lambda:InvokeFunction",
        Principal="*",
        **(invoke_condition if invoke_condition is not None else {"InvokedViaFunctionUrl": True}),
    )
    return url


def _call(
    url: str, method: str = "GET", body: bytes = b"", headers: list[tuple[str, str]] | None = None
) -> tuple[int, list[tuple[str, str]], bytes]:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=60)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    connection.putrequest(method, target)
    for name, value in headers or []:
        connection.putheader(name, value)
    connection.putheader("Content-Length", str(len(body)))
    connection.endheaders(body)
    response = connection.getresponse()
    answer = (response.status, [(k.lower(), v) for k, v in response.getheaders()], response.read())
    connection.close()
    return answer


def test_a_request_arrives_as_a_payload_format_2_event_in_a_worker_process_on_the_virtual_clock(
    lab: Lab, cloud: LocalCloud, clock: VirtualClock
) -> None:
    # GIVEN a function URL created after the control loop started, and a clock 10 virtual days on
    url = _url_function(lab, "echo")
    wait_for(lambda: any(e["url"] in url for e in cloud.journal.entries("url.started")))
    clock.advance(10 * 86400)
    before = clock.now()
    # WHEN a client POSTs JSON with a query, repeated headers and cookies to its loopback address
    loopback = cloud.function_urls.loopback_url(f"{url}orders/7?answer=custom&tag=a&tag=b&empty=")
    status, _, _ = _call(
        loopback,
        "POST",
        b'{"n": 1}',
        [
            ("Content-Type", "application/json"),
            ("X-Custom-Header", "one"),
            ("X-Custom-Header", "two"),
            ("Cookie", "session=abc; theme=dark"),
            ("User-Agent", "test-client/1"),
        ],
    )
    after = clock.now()
    # THEN the function got the documented event
    [record] = lab.invocations()
    event = record["event"]
    assert status == 201
    assert event["version"] == "2.0"
    assert event["routeKey"] == "$default"
    assert event["rawPath"] == "/orders/7"
    assert event["rawQueryString"] == "answer=custom&tag=a&tag=b&empty="
    assert event["queryStringParameters"] == {"answer": "custom", "tag": "a,b", "empty": ""}
    assert event["headers"]["x-custom-header"] == "one,two"
    assert all(name == name.lower() for name in event["headers"])
    assert event["headers"]["host"] == urlsplit(url).netloc
    assert event["cookies"] == ["session=abc", "theme=dark"]
    assert "cookie" not in event["headers"]
    assert event["body"] == '{"n": 1}'
    assert event["isBase64Encoded"] is False
    http_context = event["requestContext"]["http"]
    assert http_context == {
        "method": "POST",
        "path": "/orders/7",
        "protocol": "HTTP/1.1",
        "sourceIp": "127.0.0.1",
        "userAgent": "test-client/1",
    }
    context = event["requestContext"]
    assert context["accountId"] == "anonymous"
    assert context["apiId"] == context["domainPrefix"] == urlsplit(url).netloc.split(".")[0]
    assert context["domainName"] == urlsplit(url).netloc
    assert before * 1000 - 1 <= context["timeEpoch"] <= after * 1000 + 1
    # AND it ran in a worker process, not in the test's
    assert record["pid"] != os.getpid()


def test_a_body_that_is_not_text_or_json_arrives_base64_encoded(lab: Lab, cloud: LocalCloud) -> None:
    # GIVEN a function URL
    loopback = cloud.function_urls.loopback_url(_url_function(lab, "forms"))
    # WHEN an HTML form posts the RFC 8058 one-click body, and a client posts binary data
    form = b"List-Unsubscribe=One-Click"
    _call(loopback, "POST", form, [("Content-Type", "application/x-www-form-urlencoded")])
    _call(loopback, "POST", bytes(range(256)), [("Content-Type", "application/octet-stream")])
    _call(loopback, "POST", "grüße".encode(), [("Content-Type", "text/plain; charset=utf-8")])
    # THEN the form and binary bodies are base64 in the event, the text body is text
    form_event, binary_event, text_event = (r["event"] for r in lab.invocations())
    assert form_event["isBase64Encoded"] is True
    assert base64.b64decode(form_event["body"]) == form
    assert binary_event["isBase64Encoded"] is True
    assert base64.b64decode(binary_event["body"]) == bytes(range(256))
    assert text_event["isBase64Encoded"] is False
    assert text_event["body"] == "grüße"


def test_a_response_with_status_code_is_sent_as_given_with_its_cookies(lab: Lab, cloud: LocalCloud) -> None:
    loopback = cloud.function_urls.loopback_url(_url_function(lab, "custom"))
    # WHEN the function answers statusCode 201 with headers, a body and cookies
    status, headers, body = _call(f"{loopback}?answer=custom")
    # THEN the client sees exactly that, the cookies as set-cookie headers
    assert status == 201
    assert ("x-reply", "yes") in headers
    assert ("content-type", "text/plain") in headers
    assert [v for k, v in headers if k == "set-cookie"] == ["a=1; Max-Age=60", "b=2"]
    assert body == b"created"
    # AND a base64 body is decoded for the client
    status, headers, body = _call(f"{loopback}?answer=binary")
    assert (status, body) == (200, bytes(range(256)))


def test_any_other_answer_is_sent_as_json_with_status_200(lab: Lab, cloud: LocalCloud) -> None:
    loopback = cloud.function_urls.loopback_url(_url_function(lab, "plain"))
    for answer, expected in (("object", {"message": "hi"}), ("string", "Hello, world!")):
        status, headers, body = _call(f"{loopback}?answer={answer}")
        assert status == 200
        assert ("content-type", "application/json") in headers
        assert json.loads(body) == expected


def test_a_function_error_or_a_malformed_answer_is_a_502(lab: Lab, cloud: LocalCloud) -> None:
    loopback = cloud.function_urls.loopback_url(_url_function(lab, "failing"))
    assert _call(f"{loopback}?answer=raise")[0] == 502
    assert _call(f"{loopback}?answer=malformed")[0] == 502
    assert len(lab.invocations()) == 2  # both ran; the URL turned their answers into 502s
    assert [e["status"] for e in cloud.journal.entries("url.request")] == [502, 502]


@pytest.mark.parametrize(
    "invoke_condition",
    [
        pytest.param(None, id="no-InvokeFunction-statement"),
        pytest.param({"FunctionUrlAuthType": "NONE"}, id="InvokeFunction-conditioned-on-the-url-auth-type"),
    ],
)
def test_a_url_without_both_public_permissions_answers_403_and_runs_nothing(
    lab: Lab, cloud: LocalCloud, invoke_condition: dict[str, Any] | None
) -> None:
    # GIVEN a NONE URL whose policy grants lambda:InvokeFunctionUrl to "*" but not lambda:InvokeFunction
    # for a call through the URL (the state Terraform's aws provider 5.x leaves by itself)
    name = "guarded"
    lab.function(name, URL_HANDLER)
    url = lab.lam.create_function_url_config(FunctionName=name, AuthType="NONE")["FunctionUrl"]
    lab.lam.add_permission(
        FunctionName=name,
        StatementId="FunctionURLAllowPublicAccess",
        Action="lambda:InvokeFunctionUrl",
        Principal="*",
        FunctionUrlAuthType="NONE",
    )
    if invoke_condition is not None:
        lab.lam.add_permission(
            FunctionName=name,
            StatementId="Invoke",
            Action="lambda:InvokeFunction",
            Principal="*",
            **invoke_condition,
        )
    loopback = cloud.function_urls.loopback_url(url)
    # WHEN a client calls it
    status, _, body = _call(loopback, "POST", b"x", [("Content-Type", "text/plain")])
    # THEN it is refused as AWS refuses it, and the function never ran
    assert status == 403
    assert json.loads(body)["Message"].startswith("Forbidden")
    assert lab.invocations() == []
    # AND once lambda:InvokeFunction is granted for calls through the URL, the same request passes
    lab.lam.add_permission(
        FunctionName=name,
        StatementId="InvokeViaUrl",
        Action="lambda:InvokeFunction",
        Principal="*",
        InvokedViaFunctionUrl=True,
    )
    assert _call(loopback, "POST", b"x", [("Content-Type", "text/plain")])[0] == 201
    assert len(lab.invocations()) == 1


def test_a_request_over_the_6_mb_payload_quota_answers_413_and_runs_nothing(
    lab: Lab, cloud: LocalCloud
) -> None:
    loopback = cloud.function_urls.loopback_url(_url_function(lab, "bounded"))
    # A declared body over the quota is refused before it is read; one that fits but whose base64
    # event does not is refused after
    assert _call(loopback, "POST", b"a" * (MAX_PAYLOAD_BYTES + 1), [("Content-Type", "text/plain")])[0] == 413
    over_in_base64 = b"\x00" * (MAX_PAYLOAD_BYTES * 3 // 4 + 1024)
    status, _, _ = _call(loopback, "POST", over_in_base64, [("Content-Type", "application/octet-stream")])
    assert status == 413
    assert lab.invocations() == []


def test_a_deleted_url_is_no_longer_served(lab: Lab, cloud: LocalCloud) -> None:
    # GIVEN a served URL
    url = _url_function(lab, "short-lived")
    loopback = cloud.function_urls.loopback_url(url)
    assert cloud.function_urls.function_url("short-lived") == url
    # WHEN its configuration is deleted
    lab.lam.delete_function_url_config(FunctionName="short-lived")
    # THEN the control loop stops serving it, and its address is unknown
    wait_for(lambda: any(e["url"] in url for e in cloud.journal.entries("url.stopped")))
    with pytest.raises(ConnectionRefusedError):
        _call(loopback)
    with pytest.raises(UnknownFunctionUrlError):
        cloud.function_urls.loopback_url(url)
