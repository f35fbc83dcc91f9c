"""Sequence rules: the defaults stop on a reply and postpone on an absence; a stored map reads back
exactly, and a map the planner never writes is refused naming its field."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from typing import Any

import pytest

from outreach import clients, config, task_store
from outreach.errors import MalformedFieldError
from outreach.sequence_rules import SequenceRules
from outreach.task_store import from_item, to_avs
from tests.support.aws import Resources
from tests.support.email import planned

RULES = SequenceRules(
    on_reply="continue",
    reply_stops_other_campaigns=False,
    on_out_of_office="continue",
    forward_auto_replies=True,
    owner="owner@acme.example",
    send_days=(0, 2, 4),
    window_start="08:30",
    window_end="18:00",
)


def test_the_default_rules_stop_on_a_reply_everywhere_and_postpone_on_an_absence() -> None:
    rules = SequenceRules()
    assert (rules.on_reply, rules.reply_stops_other_campaigns, rules.on_out_of_office) == (
        "stop",
        True,
        "postpone",
    )
    assert (rules.forward_auto_replies, rules.owner, rules.send_days) == (False, "", (0, 1, 2, 3, 4))
    assert (rules.window_start, rules.window_end) == ("09:00", "17:00")


@pytest.mark.parametrize("rules", [SequenceRules(), RULES], ids=["defaults", "every field changed"])
def test_rules_read_back_from_the_stored_map_as_dynamodb_returns_it(rules: SequenceRules) -> None:
    stored = from_item(to_avs({"rules": rules.to_item()}))["rules"]
    assert isinstance(stored["send_days"][0], Decimal)
    assert SequenceRules.from_item(stored) == rules


def test_an_empty_owner_is_left_out_of_the_map_and_a_missing_name_takes_its_default() -> None:
    assert "owner" not in SequenceRules().to_item()
    assert SequenceRules.from_item({"on_reply": "continue"}) == SequenceRules(on_reply="continue")


@pytest.mark.parametrize(
    ("item", "field"),
    [
        ("stop", "rules"),
        ({"on_reply": "pause"}, "rules.on_reply"),
        ({"on_out_of_office": "stop"}, "rules.on_out_of_office"),
        ({"reply_stops_other_campaigns": "yes"}, "rules.reply_stops_other_campaigns"),
        ({"forward_auto_replies": 1}, "rules.forward_auto_replies"),
        ({"owner": "Owner <o@acme.example>"}, "rules.owner"),
        ({"owner": "o@acme.example\r\nBcc: x@evil.example"}, "rules.owner"),
        ({"send_days": []}, "rules.send_days"),
        ({"send_days": [Decimal(7)]}, "rules.send_days"),
        ({"send_days": [Decimal("1.5")]}, "rules.send_days"),
        ({"send_days": [Decimal("NaN")]}, "rules.send_days"),
        ({"send_days": [True]}, "rules.send_days"),
        ({"send_days": [Decimal(2), Decimal(1)]}, "rules.send_days"),
        ({"send_days": [Decimal(1), Decimal(1)]}, "rules.send_days"),
        ({"send_days": "01234"}, "rules.send_days"),
        ({"window_start": "9:00"}, "rules.window_start"),
        ({"window_end": "24:00"}, "rules.window_end"),
        ({"window_start": "17:00", "window_end": "09:00"}, "rules.window_end"),
        ({"stop_everything": True}, "rules"),
    ],
)
def test_a_stored_map_the_planner_never_writes_is_refused_naming_its_field(item: Any, field: str) -> None:
    with pytest.raises(MalformedFieldError) as caught:
        SequenceRules.from_item(item)
    assert caught.value.field == field


def test_a_planned_email_keeps_its_rules_and_thread_on_its_task(resources: Resources) -> None:
    emails = [replace(planned("ada@example.org", step), rules=RULES) for step in (1, 2)]
    task_store.create_email_tasks(emails)
    stored = [task_store.get_task(email.task_id) for email in emails]
    assert [task.email.rules if task and task.email else None for task in stored] == [RULES, RULES]
    assert [task.email.threaded if task and task.email else None for task in stored] == [False, True]


def test_the_first_step_is_never_threaded_and_a_follow_up_is_by_default() -> None:
    assert planned("ada@example.org", 1).threaded is False
    assert planned("ada@example.org", 2).threaded is True


def test_a_row_written_before_rules_and_threads_reads_back_without_either(resources: Resources) -> None:
    email = planned("ada@example.org", 2)
    task_store.create_email_tasks([email])
    clients.dynamodb().update_item(
        TableName=config.tasks_table(),
        Key={"task_id": {"S": email.task_id}},
        UpdateExpression="REMOVE threaded",
    )
    task = task_store.get_task(email.task_id)
    assert task is not None and task.email is not None
    assert (task.email.rules, task.email.threaded, task.email.reply_handle) == (None, False, None)
