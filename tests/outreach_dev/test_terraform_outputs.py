"""A root's outputs read flat: the pipeline's root_outputs lifted to the top, as every consumer reads them."""

from __future__ import annotations

import json
from typing import Any

from outreach_dev import terraform_outputs

PIPELINE = {
    "tasks_table_name": "outreach-dev-tasks",
    "email_sender_identity": "example.com",
    "email_dkim_records": None,
    "root_outputs": {
        "alarm_topic_arn": "arn:aws:sns:eu-west-1:111122223333:outreach-dev-alarms",
        "email_sender_identity": "example.com",
        "email_dkim_records": None,
        "email_max_send_rate": 14,
    },
}


def _recorded(**outputs: Any) -> dict[str, Any]:
    return {name: {"sensitive": False, "type": "dynamic", "value": value} for name, value in outputs.items()}


def test_root_outputs_are_lifted_and_the_pipeline_keeps_the_rest() -> None:
    flat = terraform_outputs.flatten(_recorded(pipeline=PIPELINE))

    assert flat == {
        "pipeline": {
            "tasks_table_name": "outreach-dev-tasks",
            "email_sender_identity": "example.com",
            "email_dkim_records": None,
        },
        "alarm_topic_arn": "arn:aws:sns:eu-west-1:111122223333:outreach-dev-alarms",
        "email_sender_identity": "example.com",
        "email_max_send_rate": 14,
    }
    # A null one is left out, as `terraform output -json` leaves out a null output.
    assert "email_dkim_records" not in flat


def test_a_root_output_of_its_own_wins_and_outputs_without_a_pipeline_pass_through() -> None:
    flat = terraform_outputs.flatten(_recorded(pipeline=PIPELINE, email_max_send_rate=2))
    assert flat["email_max_send_rate"] == 2
    assert terraform_outputs.flatten(_recorded(other="x")) == {"other": "x"}


def test_output_json_and_a_state_file_read_the_same() -> None:
    recorded = _recorded(pipeline=PIPELINE)
    from_json = terraform_outputs.from_json(json.dumps(recorded))

    assert from_json == terraform_outputs.from_state({"version": 4, "outputs": recorded})
    assert terraform_outputs.from_json("") == {}
    assert terraform_outputs.from_state({"version": 4}) == {}


def test_a_plan_lifts_the_known_root_outputs_of_a_pipeline_not_known_until_apply() -> None:
    # GIVEN a plan whose pipeline output holds ARNs known only after apply
    known = {"email_sender_identity": "example.com", "email_max_send_rate": 14}
    plan = {
        "planned_values": {"outputs": {"pipeline": {"sensitive": False}}},
        "output_changes": {
            "pipeline": {
                "actions": ["create"],
                "after": {"root_outputs": known},
                "after_unknown": {"root_outputs": {"alarm_topic_arn": True}},
            }
        },
    }
    # THEN the known root outputs are read, the pipeline and the unknown ones are not
    assert terraform_outputs.from_plan(plan) == known
