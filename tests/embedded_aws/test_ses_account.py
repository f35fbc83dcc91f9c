"""The embedded AWS says whether SES will send: GetAccount, and identities verified for sending."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from embedded_aws.base import client
from embedded_aws.clock import VirtualClock
from embedded_aws.ses_account import set_identity_verification, set_ses_account

REGION = "us-east-1"


@pytest.fixture
def ses(endpoint: str, clock: VirtualClock) -> Iterator[Any]:
    yield client("sesv2", endpoint, REGION)
    set_ses_account(REGION)


def test_the_emulated_account_sends_with_production_access_unless_told_otherwise(ses: Any) -> None:
    ready = ses.get_account()
    set_ses_account(REGION, production_access=False)
    sandboxed = ses.get_account()

    assert (ready["SendingEnabled"], ready["ProductionAccessEnabled"]) == (True, True)
    assert (sandboxed["SendingEnabled"], sandboxed["ProductionAccessEnabled"]) == (True, False)


def test_put_account_sending_attributes_turns_sending_off(ses: Any) -> None:
    ses.put_account_sending_attributes(SendingEnabled=False)

    assert ses.get_account()["SendingEnabled"] is False


def test_an_identity_is_verified_for_sending_exactly_when_its_verification_succeeded(ses: Any) -> None:
    ses.create_email_identity(EmailIdentity="example.com")
    verified = ses.get_email_identity(EmailIdentity="example.com")
    set_identity_verification("example.com", "PENDING", REGION)
    pending = ses.get_email_identity(EmailIdentity="example.com")

    assert (verified["VerificationStatus"], verified["VerifiedForSendingStatus"]) == ("SUCCESS", True)
    assert (pending["VerificationStatus"], pending["VerifiedForSendingStatus"]) == ("PENDING", False)
