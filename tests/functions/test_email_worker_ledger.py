"""Rules of the email worker and the contact ledger: an address (or domain) the ledger stops is never
sent to, every step Cancelled with the stop's reason; every email sent carries its campaign, step and
task as SES message tags, which name the task back."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from outreach import clients, config, contacts, ses_tags, task_store
from outreach.contacts import Source, State
from outreach.errors import ConfigurationError
from outreach.task_model import Status
from tests.functions.email_worker_support import RecordingSes, invoke, stored_task
from tests.support.email import planned

STEPS = (1, 2, 3)
AT = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)


def _run_every_step(ses: list[float], address: str, campaign: str = "spring") -> list[str]:
    """Create the campaign's three steps to ``address`` and invoke each at its send time."""
    emails = [planned(address, step, campaign=campaign) for step in STEPS]
    task_store.create_email_tasks(emails)
    outcomes = []
    for email in emails:
        ses[0] = email.send_at.timestamp()
        outcomes.append(invoke(email.task_id)["outcome"])
    return outcomes


@pytest.mark.parametrize(
    ("key", "state"),
    [
        pytest.param(contacts.address_key("anna@example.org"), State.UNSUBSCRIBED, id="unsubscribed"),
        pytest.param(contacts.address_key("anna@example.org"), State.BOUNCED, id="bounced"),
        pytest.param(contacts.address_key("anna@example.org"), State.COMPLAINED, id="complained"),
        pytest.param(contacts.address_key("anna@example.org"), State.BLOCKED, id="blocked"),
        pytest.param(contacts.domain_key("example.org"), State.BLOCKED, id="domain-blocked"),
    ],
)
def test_the_worker_never_sends_to_a_stopped_address_or_domain(
    recording_ses: RecordingSes, ses: list[float], key: str, state: State
) -> None:
    contacts.record_stop(key, state, at=AT, why="recorded before planning", source=Source.OPERATOR)
    assert _run_every_step(ses, "Anna@example.org") == ["Skipped"] * len(STEPS)
    assert recording_ses.requests == []
    stop = contacts.stop_of("anna@example.org")
    assert stop is not None
    for step in STEPS:
        task = stored_task(planned("Anna@example.org", step).task_id)
        assert (task.status, task.failure_reason) == (Status.CANCELLED, stop.reason)
        assert (task.failure_reason or "").startswith(
            f"contact_stopped: {state.value} since 2027-03-01T12:00:00Z"
        )
    assert task_store.job_counts("spring")["Cancelled"] == len(STEPS)


def test_a_stop_after_the_first_mail_cancels_the_later_steps_and_nothing_else(
    recording_ses: RecordingSes, ses: list[float]
) -> None:
    first, *later = [planned("anna@example.org", step) for step in STEPS]
    other = planned("bert@example.org", 2)
    task_store.create_email_tasks([first, *later, planned("bert@example.org", 1), other])
    assert invoke(first.task_id)["outcome"] == "Sent"
    assert invoke(planned("bert@example.org", 1).task_id)["outcome"] == "Sent"
    contacts.record_stop(
        contacts.address_key("anna@example.org"),
        State.UNSUBSCRIBED,
        at=AT,
        why="x",
        source=Source.UNSUBSCRIBE,
    )
    for email in later:
        ses[0] = email.send_at.timestamp()
        assert invoke(email.task_id)["outcome"] == "Skipped"
        assert (stored_task(email.task_id).failure_reason or "").startswith("contact_stopped: unsubscribed")
    ses[0] = other.send_at.timestamp()
    assert invoke(other.task_id)["outcome"] == "Sent"
    assert [r["Destination"]["ToAddresses"] for r in recording_ses.requests] == [
        ["anna@example.org"],
        ["bert@example.org"],
        ["bert@example.org"],
    ]


def test_every_email_carries_its_campaign_step_and_task_as_tags_that_name_the_task_back(
    recording_ses: RecordingSes, ses: list[float]
) -> None:
    campaign = "spring_2027.v2:de"
    outcomes = _run_every_step(ses, "anna@example.org", campaign=campaign)
    assert outcomes == ["Sent"] * len(STEPS)
    for step, request in zip(STEPS, recording_ses.requests, strict=True):
        tags = {tag["Name"]: tag["Value"] for tag in request["EmailTags"]}
        assert tags == {
            "outreach-campaign": "spring_5F2027_2Ev2_3Ade",
            "outreach-step": str(step),
            "outreach-task": planned("anna@example.org", step, campaign=campaign).task_id.rsplit("#", 1)[1],
        }
        # As SES events carry them: {name: [value]}, beside SES's own tags.
        event_tags = {name: [value] for name, value in tags.items()} | {"ses:configuration-set": ["x"]}
        assert ses_tags.task_ref(event_tags) == ses_tags.TaskRef(
            campaign_id=campaign,
            step=step,
            task_id=planned("anna@example.org", step, campaign=campaign).task_id,
        )


def test_a_campaign_id_ses_cannot_carry_as_a_tag_fails_its_email_without_sending(
    recording_ses: RecordingSes, ses: list[float]
) -> None:
    campaign = "c" + "_" * 100  # 301 characters as a tag value, SES allows 256
    email = planned("anna@example.org", campaign=campaign)
    task_store.create_email_tasks([email])
    assert invoke(email.task_id)["outcome"] == "Failed"
    assert (stored_task(email.task_id).failure_reason or "").startswith("untaggable: outreach-campaign:")
    assert recording_ses.requests == []


def test_the_worker_stops_at_its_start_without_the_ledger(
    ses: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    email = planned("anna@example.org")
    task_store.create_email_tasks([email])
    monkeypatch.delenv("CONTACTS_TABLE")
    with pytest.raises(ConfigurationError, match="CONTACTS_TABLE"):
        config.for_email_worker()
    with pytest.raises(ConfigurationError, match="CONTACTS_TABLE"):
        invoke(email.task_id)
    assert stored_task(email.task_id).status is Status.PENDING


def test_a_send_reads_its_recipients_ledger_records_once_for_the_stop_and_the_reply(
    recording_ses: RecordingSes, ses: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = clients.dynamodb()
    ledger_reads: list[list[str]] = []

    class CountingLedgerReads:
        """The DynamoDB client, noting the keys of each BatchGetItem of the contacts table."""

        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

        def batch_get_item(self, **request: Any) -> Any:
            ask = request["RequestItems"].get(config.contacts_table())
            if ask is not None:
                ledger_reads.append(sorted(key[contacts.KEY]["S"] for key in ask["Keys"]))
            return real.batch_get_item(**request)

    email = planned("anna@example.org")
    task_store.create_email_tasks([email])
    monkeypatch.setattr(clients, "dynamodb", CountingLedgerReads)
    assert invoke(email.task_id)["outcome"] == "Sent"
    assert ledger_reads == [
        sorted([contacts.address_key(email.message.to), contacts.domain_key(email.message.to)])
    ]
    assert len(recording_ses.requests) == 1
