"""Rules of the unsubscribe endpoint: GET never unsubscribes, a one-click POST does and fans out, and a
token that proves nothing, or a request out of bounds, changes nothing."""

from __future__ import annotations

import base64
import io
import json
from typing import Any

import pytest
from botocore.exceptions import ClientError

from outreach import clients, contacts, ses_event_consumer, ses_events
from outreach.errors import ConfigurationError
from outreach.observability import logger
from outreach.task_model import Status
from outreach.unsubscribe import endpoint, pages
from outreach.unsubscribe.token import MAX_TOKEN_CHARS, make_token
from tests.functions.feedback_support import (
    Feedback,
    campaign,
    create_hmac_key,
    queued_bodies,
    schedule_exists,
    sqs_batch,
    stored,
    url_request,
)
from tests.support.lambda_context import FakeContext

A, B = "ada@example.org", "bob@example.org"
ONE_CLICK = "List-Unsubscribe=One-Click"


def _call(request: dict[str, Any]) -> dict[str, Any]:
    return dict(endpoint.lambda_handler(request, FakeContext()))


def _token(feedback: Feedback, address: str = A, step: int = 1) -> str:
    return make_token(feedback.key_id, "spring", step, address)


def _post(token: str, form: str = ONE_CLICK, **options: Any) -> dict[str, Any]:
    return _call(url_request("POST", query=f"t={token}", form=form, **options))


def _nothing_changed(feedback: Feedback, *addresses: str) -> None:
    assert all(contacts.stop_of(address) is None for address in addresses)
    assert queued_bodies(feedback.queue_url) == []


def _assert_safe_headers(response: dict[str, Any]) -> None:
    headers = response["headers"]
    assert headers["content-type"] == "text/html; charset=utf-8"
    assert headers["cache-control"] == "no-store"
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["content-security-policy"].startswith("default-src 'none'; form-action 'self'")
    assert "cookies" not in response
    assert not [name for name in headers if name.lower() == "set-cookie"]
    assert response["isBase64Encoded"] is False


def test_get_shows_the_confirmation_page_and_never_unsubscribes(feedback: Feedback) -> None:
    emails = campaign(feedback, [A], steps=2)
    token = _token(feedback)
    # A link scanner fetches the link, again and again.
    responses = [_call(url_request("GET", query=f"t={token}")) for _ in range(3)]
    for response in responses:
        assert response["statusCode"] == 200
        _assert_safe_headers(response)
        page = response["body"]
        assert f'<form method="post" action="?t={token}">' in page
        assert '<input type="hidden" name="List-Unsubscribe" value="One-Click">' in page
        assert A in page
    _nothing_changed(feedback, A)
    assert all(stored(email.task_id).status is Status.PENDING for email in emails[A])


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"base64_body": True},
        {
            "form": (
                '--b1\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\n'
                "One-Click\r\n--b1--\r\n"
            ),
            "content_type": "multipart/form-data; boundary=b1",
        },
    ],
    ids=["form-urlencoded", "base64 in the payload", "multipart/form-data"],
)
def test_a_one_click_post_records_the_unsubscribe_and_its_fan_out_cancels_open_emails(
    feedback: Feedback, options: dict[str, Any]
) -> None:
    emails = campaign(feedback, [A, B])
    response = _post(_token(feedback, step=2), **options)
    assert response["statusCode"] == 200
    _assert_safe_headers(response)
    assert "You are unsubscribed" in response["body"]
    stop = contacts.stop_of(A)
    assert stop is not None
    assert (stop.state, stop.source, stop.campaign_id) == (
        contacts.State.UNSUBSCRIBED,
        contacts.Source.UNSUBSCRIBE,
        "spring",
    )
    assert stop.since == "2027-03-02T08:30:00Z"
    # The fan-out message is on the SES-events queue; the consumer cancels every open email to A.
    [message] = queued_bodies(feedback.queue_url)
    event = ses_events.parse(message)
    assert (event.kind, event.recipients, event.task and event.task.step) == (
        ses_events.EventKind.UNSUBSCRIBE,
        (A,),
        2,
    )
    assert ses_event_consumer.lambda_handler(sqs_batch(message), FakeContext())["batchItemFailures"] == []
    for email in emails[A]:
        assert stored(email.task_id).status is Status.CANCELLED
        assert not schedule_exists(feedback, email)
    assert all(stored(email.task_id).status is Status.PENDING for email in emails[B])
    assert contacts.stop_of(B) is None


def test_a_repeated_post_answers_the_same_and_changes_nothing_more(feedback: Feedback) -> None:
    token = _token(feedback)
    assert _post(token)["statusCode"] == 200
    first = contacts.stop_of(A)
    assert _post(token)["statusCode"] == 200
    assert contacts.stop_of(A) == first
    # Each POST queues its fan-out (a retry completes what a failed one began); both are idempotent.
    assert len(queued_bodies(feedback.queue_url)) == 2


def test_a_forged_token_changes_nothing(feedback: Feedback) -> None:
    forged = make_token(create_hmac_key(), "spring", 1, A)
    for response in (_post(forged), _call(url_request("GET", query=f"t={forged}"))):
        assert response["statusCode"] == 400
        _assert_safe_headers(response)
        assert "This link is not valid" in response["body"]
    _nothing_changed(feedback, A)


def _other(char: str) -> str:
    """A base64url character that is not ``char``."""
    return "A" if char != "A" else "B"


def test_an_altered_token_changes_nothing(feedback: Feedback) -> None:
    token = _token(feedback)
    payload, mac = token.split(".")
    # Each alteration changes one character for another (the MAC differs each run: "A" may be there).
    for altered in (
        f"{payload[:-2]}{_other(payload[-2])}{payload[-1]}.{mac}",
        f"{payload}.{mac[:5]}{_other(mac[5])}{mac[6:]}",
        token + "A",
    ):
        assert altered != token
        response = _post(altered)
        assert response["statusCode"] == 400
        assert "This link is not valid" in response["body"]
    _nothing_changed(feedback, A)


def test_a_valid_token_replayed_for_another_address_changes_nothing(feedback: Feedback) -> None:
    bob = _token(feedback, B)
    ada = _token(feedback, A)
    # Bob's valid MAC under a payload naming Ada, and Bob's token with Ada named beside it.
    spliced = f"{ada.split('.')[0]}.{bob.split('.')[1]}"
    assert _post(spliced)["statusCode"] == 400
    _nothing_changed(feedback, A, B)
    response = _call(url_request("POST", query=f"t={bob}&a={A}&t2={ada}", form=ONE_CLICK))
    assert response["statusCode"] == 200
    assert contacts.stop_of(A) is None
    stop = contacts.stop_of(B)
    assert stop is not None
    assert stop.key == contacts.address_key(B)


@pytest.mark.parametrize("form", ["", "List-Unsubscribe=Yes", "One-Click", "list-unsubscribe=one-click"])
def test_a_post_without_the_one_click_body_is_refused(feedback: Feedback, form: str) -> None:
    response = _post(_token(feedback), form=form)
    assert response["statusCode"] == 400
    _nothing_changed(feedback, A)


@pytest.mark.parametrize("method", ["PUT", "DELETE", "HEAD", "OPTIONS", "PATCH"])
def test_other_methods_are_refused_with_405(feedback: Feedback, method: str) -> None:
    response = _call(url_request(method, query=f"t={_token(feedback)}", form=ONE_CLICK))
    assert response["statusCode"] == 405
    assert response["headers"]["allow"] == "GET, POST"
    _assert_safe_headers(response)
    _nothing_changed(feedback, A)


@pytest.mark.parametrize(
    "query",
    ["", "x=1", "t=", "t=a&t=b", "t=" + "A" * (MAX_TOKEN_CHARS + 1), "&".join(f"x{i}=1" for i in range(30))],
    ids=["none", "no t", "empty", "two", "oversized", "many fields"],
)
def test_a_missing_repeated_or_oversized_token_is_refused(feedback: Feedback, query: str) -> None:
    for request in (url_request("GET", query=query), url_request("POST", query=query, form=ONE_CLICK)):
        assert _call(request)["statusCode"] == 400
    _nothing_changed(feedback, A)


@pytest.mark.parametrize("base64_body", [False, True])
def test_a_body_over_4_kb_is_refused_with_413(feedback: Feedback, base64_body: bool) -> None:
    form = ONE_CLICK + "&pad=" + "x" * 4096
    response = _post(_token(feedback), form=form, base64_body=base64_body)
    assert response["statusCode"] == 413
    _nothing_changed(feedback, A)
    # At the bound itself the request is read.
    fits = ONE_CLICK + "&pad=" + "x" * (4096 - len(ONE_CLICK) - 5)
    assert _post(_token(feedback), form=fits, base64_body=base64_body)["statusCode"] == 200


def test_no_cookie_is_read_or_set(feedback: Feedback) -> None:
    token = _token(feedback)
    for request in (
        url_request("GET", query=f"t={token}", cookies=["session=1"]),
        url_request("POST", query=f"t={token}", form=ONE_CLICK, cookies=["session=1"]),
    ):
        response = _call(request)
        assert response["statusCode"] == 200
        _assert_safe_headers(response)


def test_what_the_pages_show_is_escaped(feedback: Feedback) -> None:
    address = "o'brien&co@example.org"
    token = _token(feedback, address)
    page = _call(url_request("GET", query=f"t={token}"))["body"]
    assert "o&#x27;brien&amp;co@example.org" in page
    assert address not in page
    done = _post(token)["body"]
    assert "o&#x27;brien&amp;co@example.org" in done
    hostile = pages.confirmation_page('"><script>alert(1)</script>', "<b>@example.org").html
    assert "<script>" not in hostile
    assert "<b>" not in hostile
    assert "<script>" not in pages.error_page(400, "<script>").html


class _Failing:
    """A client whose every call fails as the service would (KMS or DynamoDB unavailable)."""

    def __init__(self, operation: str, real: Any) -> None:
        self._operation = operation
        self._real = real

    def __getattr__(self, name: str) -> Any:
        if name != self._operation:
            return getattr(self._real, name)

        def fail(**_: Any) -> Any:
            raise ClientError({"Error": {"Code": "ServiceUnavailable", "Message": "down"}}, name)

        return fail


@pytest.mark.parametrize(
    ("service", "operation"), [("kms", "verify_mac"), ("dynamodb", "update_item"), ("sqs", "send_message")]
)
def test_kms_dynamodb_or_sqs_failing_answers_503_logs_the_error_and_counts_it(
    feedback: Feedback,
    capsys: pytest.CaptureFixture[str],
    service: str,
    operation: str,
) -> None:
    token = _token(feedback)
    real = getattr(clients, service)()
    stream = io.StringIO()
    with pytest.MonkeyPatch.context() as failing:
        failing.setattr(clients, service, lambda: _Failing(operation, real))
        failing.setattr(logger.registered_handler, "stream", stream)
        response = _post(token)
    assert response["statusCode"] == 503
    assert response["headers"]["retry-after"] == "60"
    _assert_safe_headers(response)
    logged = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert any(
        line["level"] == "ERROR" and "ServiceUnavailable" in line.get("exception", "") for line in logged
    )
    metrics = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"_aws"' in line]
    assert any(line.get("UnsubscribeFailures") == [1.0] for line in metrics)
    # The retry completes it.
    assert _post(token)["statusCode"] == 200
    stop = contacts.stop_of(A)
    assert stop is not None
    assert stop.state is contacts.State.UNSUBSCRIBED
    assert queued_bodies(feedback.queue_url)


def test_the_endpoint_stops_at_its_start_without_its_key(
    feedback: Feedback, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("UNSUBSCRIBE_KEY_ID")
    with pytest.raises(ConfigurationError, match="UNSUBSCRIBE_KEY_ID"):
        _call(url_request("GET", query=f"t={_token(feedback)}"))


def test_a_body_that_is_no_base64_is_refused(feedback: Feedback) -> None:
    request = url_request("POST", query=f"t={_token(feedback)}", form=ONE_CLICK, base64_body=True)
    request["body"] = "%%%" + base64.b64encode(ONE_CLICK.encode()).decode()
    assert _call(request)["statusCode"] == 400
    _nothing_changed(feedback, A)
