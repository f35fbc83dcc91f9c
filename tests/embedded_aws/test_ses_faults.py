"""SES faults on the embedded AWS: a send whose answer is lost is still sent once, and the account's
send quota (rate per second, emails per 24 hours) refuses what goes over it and reports what was sent.

In-process, moto reads its own ``utcnow`` (the wall clock), not ``outreach.clock``: the tests install a
virtual clock in moto that stands still unless advanced, and point ``outreach.clock`` at it too.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError, ConnectionClosedError, ReadTimeoutError
from moto import mock_aws

from embedded_aws.clock import VirtualClock, install_in_moto
from embedded_aws.ses_account import set_ses_account
from embedded_aws.ses_faults import inject_ses
from embedded_aws.ses_v2 import sent_emails
from outreach import clients
from outreach import clock as outreach_clock
from tests.support.aws import REGION
from tests.support.email import FIRST_SEND, SENDER_DOMAIN, create_ses_resources

DAY = 24 * 3600.0


@pytest.fixture
def frozen() -> Iterator[VirtualClock]:
    """moto's clock (and the functions') at the first send time, moving only when advanced."""
    virtual = VirtualClock(1e-9, origin_virtual=FIRST_SEND.timestamp())
    install_in_moto(virtual)
    outreach_clock.set_time_source(virtual.now)
    yield virtual
    outreach_clock.set_time_source(None)
    install_in_moto(None)
    virtual.close()


@pytest.fixture
def ses(aws_env: None, frozen: VirtualClock) -> Iterator[Any]:
    """The functions' own SES client (no retries) on moto in-process, with a verified sender."""
    with mock_aws():
        clients.reset()
        create_ses_resources()
        yield clients.sesv2()
        clients.reset()
    set_ses_account(REGION)


def _send(ses: Any, to: str) -> str:
    message_id: str = ses.send_email(
        FromEmailAddress=f"sales@{SENDER_DOMAIN}",
        Destination={"ToAddresses": [to]},
        Content={"Simple": {"Subject": {"Data": "Hello"}, "Body": {"Text": {"Data": "Hi"}}}},
    )["MessageId"]
    return message_id


def _error(raised: pytest.ExceptionInfo[ClientError]) -> tuple[str, str, int]:
    response: Any = raised.value.response
    return (
        response["Error"]["Code"],
        response["Error"]["Message"],
        response["ResponseMetadata"]["HTTPStatusCode"],
    )


def test_a_send_accepted_before_a_read_timeout_is_recorded_once_and_the_caller_sees_the_timeout(
    ses: Any,
) -> None:
    with inject_ses() as faults:
        lost = faults.timeout_after_send({"a@example.org"})
        with pytest.raises(ReadTimeoutError):
            _send(ses, "a@example.org")
        assert lost.fired == 1
        assert [sent.to for sent in sent_emails(REGION)] == [("a@example.org",)]
        _send(ses, "a@example.org")  # the rule fires once per recipient
    assert len(sent_emails(REGION)) == 2


def test_a_send_accepted_before_the_server_drops_the_connection_is_recorded_once(
    endpoint: str, clock: VirtualClock
) -> None:
    # Configured like the functions' SES client: one attempt, no retry.
    config = Config(retries={"mode": "standard", "total_max_attempts": 1}, read_timeout=30)
    ses = boto3.client(
        "sesv2",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=config,
    )
    ses.create_email_identity(EmailIdentity=SENDER_DOMAIN)
    with inject_ses() as faults:
        lost = faults.timeout_after_send({"a@example.org"})
        with pytest.raises(ConnectionClosedError):
            _send(ses, "a@example.org")
        assert lost.fired == 1
        assert [sent.to for sent in sent_emails(REGION)] == [("a@example.org",)]
        _send(ses, "a@example.org")  # the server answers the next request as usual
    assert len(sent_emails(REGION)) == 2


def test_sends_above_the_accounts_rate_are_refused_within_the_second_and_accepted_the_next(
    ses: Any, frozen: VirtualClock
) -> None:
    set_ses_account(REGION, max_send_rate=2)
    with inject_ses() as faults:
        rate = faults.throttle_at_account_rate()
        _send(ses, "a@example.org")
        _send(ses, "b@example.org")
        with pytest.raises(ClientError) as refused:
            _send(ses, "c@example.org")
        assert _error(refused) == ("TooManyRequestsException", "Maximum sending rate exceeded.", 429)
        assert len(sent_emails(REGION)) == 2
        frozen.advance(1.0)
        _send(ses, "c@example.org")
    assert [sent.to for sent in sent_emails(REGION)] == [
        ("a@example.org",),
        ("b@example.org",),
        ("c@example.org",),
    ]
    assert (rate.rate_refused, rate.daily_refused) == (1, 0)


def test_sends_beyond_the_24_hour_quota_are_refused_until_the_first_send_is_a_day_old(
    ses: Any, frozen: VirtualClock
) -> None:
    set_ses_account(REGION, max_send_rate=100, max_24_hour_send=2)
    with inject_ses() as faults:
        quota = faults.throttle_at_account_rate()
        _send(ses, "a@example.org")
        frozen.advance(3600)
        _send(ses, "b@example.org")
        frozen.advance(DAY - 3600 - 1)
        with pytest.raises(ClientError) as refused:
            _send(ses, "c@example.org")
        assert _error(refused) == ("LimitExceededException", "Daily message quota exceeded.", 400)
        assert len(sent_emails(REGION)) == 2
        frozen.advance(1)
        _send(ses, "c@example.org")
    assert len(sent_emails(REGION)) == 3
    assert (quota.rate_refused, quota.daily_refused) == (0, 1)


def test_get_account_reports_the_quota_set_for_the_account_and_the_defaults_otherwise(ses: Any) -> None:
    production = ses.get_account()["SendQuota"]
    set_ses_account(REGION, production_access=False)
    sandbox = ses.get_account()["SendQuota"]
    set_ses_account(REGION, max_send_rate=1.0, max_24_hour_send=200.0)
    chosen = ses.get_account()["SendQuota"]

    assert (production["MaxSendRate"], production["Max24HourSend"]) == (14.0, 50000.0)
    assert (sandbox["MaxSendRate"], sandbox["Max24HourSend"]) == (1.0, 200.0)
    assert (chosen["MaxSendRate"], chosen["Max24HourSend"]) == (1.0, 200.0)


def test_sent_last_24_hours_counts_the_emails_accepted_in_the_last_24_hours(
    ses: Any, frozen: VirtualClock
) -> None:
    assert ses.get_account()["SendQuota"]["SentLast24Hours"] == 0.0
    _send(ses, "a@example.org")
    frozen.advance(3600)
    _send(ses, "b@example.org")
    with inject_ses() as faults:
        faults.throttle({"c@example.org"}, times=1)
        with pytest.raises(ClientError, match="TooManyRequestsException"):
            _send(ses, "c@example.org")  # refused: not sent, not counted
    assert ses.get_account()["SendQuota"]["SentLast24Hours"] == 2.0
    frozen.advance(DAY - 3600)
    assert ses.get_account()["SendQuota"]["SentLast24Hours"] == 1.0
