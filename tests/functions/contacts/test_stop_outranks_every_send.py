"""The rule an opt-out outranks every schedule: for any interleaving of worker invocations (several
steps of several campaigns to a few addresses), stop events and their duplicates, no email goes to an
address after a stop for it (or its domain) was recorded, except one whose worker had claimed its task
and read the ledger before that stop: the one send the issue allows, and no other.

The interleaving runs in-process on moto, one step at a time in the order hypothesis picks. A stop may
also be recorded inside an invocation, right after its claim or right after its ledger read (where a
concurrent event consumer can land). A log keeps the order of every ledger-stop write, every ledger
read by a worker and every SendEmail call, and the rule is checked on it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from outreach import clients, contacts, email_worker, task_store
from outreach.contacts import Source, State, reads
from outreach.email_task import PlannedEmail
from outreach.task_model import Status
from outreach.task_store import transitions
from outreach_dev.contacts_table_shape import create_contacts_table
from outreach_dev.tasks_table_shape import create_tasks_table
from tests.functions.email_worker_support import invoke
from tests.support.aws import REGION
from tests.support.email import FIRST_SEND, planned

GROUP = "outreach-test-email"
AT = datetime(2027, 3, 2, 8, 0, tzinfo=UTC)
ADDRESSES = 3  # the first two share a domain
CAMPAIGNS = 2
STEPS = (1, 2)
TASKS = ADDRESSES * CAMPAIGNS * len(STEPS)
STOP_STATES = (State.BLOCKED, State.BOUNCED, State.UNSUBSCRIBED, State.COMPLAINED)

# A stop event: of one address (its index) or of a domain (("domain", index)), with its state.
stops = st.tuples(
    st.one_of(st.integers(0, ADDRESSES - 1), st.tuples(st.just("domain"), st.integers(0, 1))),
    st.sampled_from(STOP_STATES),
)
hooks = st.one_of(st.none(), st.tuples(st.sampled_from(["after claim", "after read"]), st.integers(0, 3)))
operations = st.lists(
    st.one_of(
        st.tuples(st.just("invoke"), st.integers(0, TASKS - 1), hooks),
        st.tuples(st.just("stop"), st.integers(0, 3)),
    ),
    min_size=1,
    max_size=12,
)


@dataclass
class Log:
    """What happened, in order: ("stop", key), ("read", invocation, address) and ("send", invocation,
    address); ``hook`` is a stop to record inside the running invocation, after its claim or its read."""

    entries: list[tuple[Any, ...]] = field(default_factory=list)
    invocation: int = 0
    hook: tuple[str, Callable[[], None]] | None = None

    def run_hook(self, point: str) -> None:
        if self.hook is not None and self.hook[0] == point:
            _, action = self.hook
            self.hook = None
            action()


class _LoggingSes:
    def __init__(self, log: Log) -> None:
        self._client = boto3.client("sesv2", region_name=REGION)
        self._log = log

    def send_email(self, **request: Any) -> Any:
        (to,) = request["Destination"]["ToAddresses"]
        self._log.entries.append(("send", self._log.invocation, contacts.normalise(to)))
        return self._client.send_email(**request)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


_examples = itertools.count()


@settings(
    max_examples=20,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(pool=st.lists(stops, min_size=4, max_size=4), ops=operations)
def test_no_email_goes_to_an_address_after_its_stop_but_the_one_read_before_it(
    ses: list[float],
    monkeypatch: pytest.MonkeyPatch,
    pool: list[tuple[Any, State]],
    ops: list[tuple[Any, ...]],
) -> None:
    n = next(_examples)
    # A table of its own per example: moto copies a whole table for each action of a transaction.
    monkeypatch.setenv("TASKS_TABLE", f"tasks-{n}")
    monkeypatch.setenv("CONTACTS_TABLE", create_contacts_table(f"contacts-{n}", REGION))
    create_tasks_table(f"tasks-{n}", REGION)
    addresses = [f"p{i}.{n}@d{min(i, 1)}.{n}.example" for i in range(ADDRESSES)]
    domains = [f"d{i}.{n}.example" for i in range(2)]
    campaigns = [f"c{n}-{j}" for j in range(CAMPAIGNS)]
    emails: list[PlannedEmail] = [
        # Every step due at once, so any order of invocations may send.
        replace(planned(address, step, campaign=campaign), send_at=FIRST_SEND)
        for campaign in campaigns
        for address in addresses
        for step in STEPS
    ]
    for campaign in campaigns:
        task_store.create_email_tasks([e for e in emails if e.campaign_id == campaign])

    log = Log()
    # The functions themselves, not what an earlier example patched in (monkeypatch undoes at the end).
    real_stop_of, real_claim = reads.stop_of, transitions.claim_email

    def logged_stop_of(address: str) -> contacts.Stop | None:
        found = real_stop_of(address)
        log.entries.append(("read", log.invocation, contacts.normalise(address)))
        log.run_hook("after read")
        return found

    def hooked_claim(*args: Any, **kwargs: Any) -> Any:
        claimed = real_claim(*args, **kwargs)
        log.run_hook("after claim")
        return claimed

    monkeypatch.setattr(contacts, "stop_of", logged_stop_of)
    monkeypatch.setattr(task_store, "claim_email", hooked_claim)
    logging_ses = _LoggingSes(log)
    monkeypatch.setattr(clients, "sesv2", lambda: logging_ses)
    assert email_worker.contacts.stop_of is logged_stop_of  # type: ignore[attr-defined]

    def stop_event(index: int) -> None:
        """What the event consumer (or the operator) does for a stop: record it, then fan out."""
        target, state = pool[index]
        if isinstance(target, tuple):
            key = contacts.domain_key(domains[target[1]])
        else:
            key = contacts.address_key(addresses[target])
        if contacts.record_stop(key, state, at=AT, why=f"event {index}", source=Source.SES):
            log.entries.append(("stop", key))
        if not isinstance(target, tuple):
            stop = real_stop_of(addresses[target])
            assert stop is not None
            contacts.cancel_open_emails(addresses[target], stop.reason, GROUP)

    for op in ops:
        if op[0] == "stop":
            stop_event(op[1])
            continue
        _, task_index, hook = op
        log.invocation += 1
        log.hook = None if hook is None else (hook[0], lambda index=hook[1]: stop_event(index))
        invoke(emails[task_index].task_id, request_id=f"request-{n}-{log.invocation}")
        log.hook = None

    # The rule, on the log: a send after the first stop covering its address is allowed only if its
    # own invocation read the ledger before that stop.
    def covering(address: str) -> set[str]:
        return {contacts.address_key(address), contacts.domain_key(address)}

    for position, entry in enumerate(log.entries):
        if entry[0] != "send":
            continue
        _, invocation, address = entry
        stopped_at = [
            i for i, e in enumerate(log.entries[:position]) if e[0] == "stop" and e[1] in covering(address)
        ]
        if not stopped_at:
            continue
        own_reads = [
            i
            for i, e in enumerate(log.entries[:position])
            if e[0] == "read" and e[1] == invocation and e[2] == address
        ]
        assert own_reads, f"send without a ledger read: {log.entries}"
        assert own_reads[-1] < stopped_at[0], f"sent after a stop it had read: {log.entries}"

    # And every stopped address (its own stop, fanned out) has nothing Pending left.
    for index in {op[1] for op in ops if op[0] == "stop"}:
        target, _ = pool[index]
        if isinstance(target, tuple):
            continue
        for task in task_store.email_tasks_to(addresses[target]):
            assert task.status is not Status.PENDING, task.task_id
            if task.status is Status.CANCELLED:
                assert (task.failure_reason or "").startswith(("contact_stopped", "earlier_step_not_sent"))
