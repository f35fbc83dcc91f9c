"""The senders' conditions: each role sends only as a planned SES identity (``ses:FromAddress``).

The campaign worker from any address of its domain identity, the inbound processor's forwards from
its one forwarder address; a condition taken out, widened past the planned identities or given a
wildcard is reported, and so are recorded senders the condition leaves out.
https://docs.aws.amazon.com/ses/latest/dg/control-user-access.html
"""

from __future__ import annotations

import json

import pytest

from tests.iam.conftest import EVIDENCE_TIMEOUT, Evidence
from tests.iam.function_needs import function_needs
from tests.iam.operation_actions import FROM_ADDRESS
from tests.iam.policy_probes import (
    CONFIGURATION_SET,
    IDENTITY,
    INBOUND,
    REPLY_IDENTITY,
    WORKER,
    allows,
    compare_with,
    findings,
    function_of,
    statement_of,
    with_condition,
)
from tests.iam.role_comparison import Comparison, ConditionFinding, Grant, condition_findings

pytestmark = pytest.mark.timeout(EVIDENCE_TIMEOUT)

FORWARDER = "forwarder@reply.example.com"


# ---- the campaign worker: any address of its domain identity --------------------------------------


def test_the_worker_sends_only_from_addresses_of_the_planned_identity(evidence: Evidence) -> None:
    worker = function_of(evidence, WORKER)
    assert statement_of(worker.policy, "SendWithTheCampaignIdentity")["Condition"] == {
        "StringLike": {FROM_ADDRESS: ["*@example.com", "*@*.example.com"]}
    }
    for resource in (IDENTITY, CONFIGURATION_SET):
        for sender in ("sales@example.com", "news@mail.example.com"):
            assert allows(worker, "ses:SendEmail", resource, **{FROM_ADDRESS: [sender]}), (resource, sender)
        for sender in ("ceo@evil.test", "sales@example.com.evil.test", "Sales@Example.com"):
            assert not allows(worker, "ses:SendEmail", resource, **{FROM_ADDRESS: [sender]}), (
                resource,
                sender,
            )
        assert not allows(worker, "ses:SendEmail", resource)


def test_send_email_without_from_address_is_reported(evidence: Evidence) -> None:
    policy = with_condition(evidence, WORKER, "SendWithTheCampaignIdentity", None)
    comparison = compare_with(evidence, WORKER, policy)
    why = "sends from any address: no ses:FromAddress condition"
    expected = findings(policy, "SendWithTheCampaignIdentity", FROM_ADDRESS, "", why)
    assert comparison == Comparison(conditions=expected), str(comparison)


@pytest.mark.parametrize("sender", ["*", "*@*", "*@example.org"])
def test_a_from_address_beyond_the_planned_identity_is_reported(evidence: Evidence, sender: str) -> None:
    condition = {"StringLike": {FROM_ADDRESS: ["*@example.com", sender]}}
    policy = with_condition(evidence, WORKER, "SendWithTheCampaignIdentity", condition)
    comparison = compare_with(evidence, WORKER, policy)
    why = "not an address of a planned SES identity"
    expected = findings(policy, "SendWithTheCampaignIdentity", FROM_ADDRESS, sender, why)
    assert comparison == Comparison(conditions=expected), str(comparison)


def test_recorded_senders_outside_the_condition_are_reported_missing(evidence: Evidence) -> None:
    condition = {"StringEquals": {FROM_ADDRESS: ["nobody@example.com"]}}
    policy = with_condition(evidence, WORKER, "SendWithTheCampaignIdentity", condition)
    comparison = compare_with(evidence, WORKER, policy)
    needs = function_needs(function_of(evidence, WORKER), evidence.plan, evidence.records)
    sends = sorted(n for n in needs if n.action == "ses:SendEmail")
    assert sends
    assert comparison.missing == sends


# ---- the inbound processor: its one forwarder address ---------------------------------------------


def test_the_inbound_processor_forwards_only_from_its_forwarder_address(evidence: Evidence) -> None:
    processor = function_of(evidence, INBOUND)
    assert statement_of(processor.policy, "ForwardFromTheForwarder")["Condition"] == {
        "StringEquals": {FROM_ADDRESS: [FORWARDER]}
    }
    assert allows(processor, "ses:SendEmail", REPLY_IDENTITY, **{FROM_ADDRESS: [FORWARDER]})
    for sender in (
        "sales@reply.example.com",
        "Forwarder@reply.example.com",
        "forwarder@reply.example.com.evil.test",
        "forwarder@example.com",
    ):
        assert not allows(processor, "ses:SendEmail", REPLY_IDENTITY, **{FROM_ADDRESS: [sender]}), sender
    assert not allows(processor, "ses:SendEmail", REPLY_IDENTITY)
    assert not allows(processor, "ses:SendEmail", IDENTITY, **{FROM_ADDRESS: [FORWARDER]})


def test_the_forwarders_sends_outside_the_condition_are_reported_missing(evidence: Evidence) -> None:
    condition = {"StringEquals": {FROM_ADDRESS: ["nobody@reply.example.com"]}}
    policy = with_condition(evidence, INBOUND, "ForwardFromTheForwarder", condition)
    needs = function_needs(function_of(evidence, INBOUND), evidence.plan, evidence.records)
    sends = sorted(n for n in needs if n.action == "ses:SendEmail")
    assert [n.request_context for n in sends] == [{FROM_ADDRESS: [FORWARDER]}]
    assert compare_with(evidence, INBOUND, policy).missing == sends


@pytest.mark.parametrize(
    ("sender", "reported"),
    [
        (FORWARDER, False),
        ("forwarder@mail.reply.example.com", False),  # a subdomain of the identity's domain
        ("*@reply.example.com", False),  # the identity's whole domain, as the worker's
        ("forward*@reply.example.com", True),
        ("forwarde?@reply.example.com", True),
        ("forwarder@*.example.com", True),
        ("forwarder@*", True),
        ("*", True),
        ("forwarder@example.org", True),  # no planned identity
        ("forwarder@evilreply.example.com", True),
        ("reply.example.com", True),
        ("@reply.example.com", True),
    ],
)
def test_a_from_address_is_one_address_or_the_domain_of_a_planned_identity(
    sender: str, reported: bool
) -> None:
    condition = json.dumps({"StringEquals": {FROM_ADDRESS: [sender]}})
    grant = Grant("ForwardFromTheForwarder", "ses:SendEmail", REPLY_IDENTITY, condition)
    found = list(condition_findings(grant, [], {REPLY_IDENTITY}))
    why = "not an address of a planned SES identity"
    expected = [ConditionFinding(grant.sid, grant.action, grant.resource, FROM_ADDRESS, sender, why)]
    assert found == (expected if reported else [])
