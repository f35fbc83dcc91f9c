"""A root's settings as its plan has them: region, allowed accounts, reservations, values, errors."""

from __future__ import annotations

from typing import Any

from outreach_dev.planned_root import first_error, from_plan_json, resource_changes


def function_change(name: str, reserved: int, actions: list[str] | None = None) -> dict[str, Any]:
    return {
        "address": f"module.pipeline.module.{name}.aws_lambda_function.this",
        "mode": "managed",
        "type": "aws_lambda_function",
        "change": {
            "actions": actions or ["create"],
            "after": {"function_name": name, "reserved_concurrent_executions": reserved},
        },
    }


PLAN: dict[str, Any] = {
    "variables": {
        "region": {"value": "eu-west-1"},
        "allowed_account_ids": {"value": ["111122223333"]},
        "email_sender_identity": {"value": "mail.example.com"},
    },
    "planned_values": {"outputs": {"dashboard_name": {"value": "outreach-dev"}, "pipeline": {}}},
    "configuration": {
        "provider_config": {"aws": {"expressions": {"region": {"references": ["var.region"]}}}}
    },
    "resource_changes": [
        function_change("outreach-dev-scraper", 140),
        function_change("outreach-dev-dispatcher", -1),
        function_change("outreach-dev-old", 50, actions=["delete"]),
        {
            "address": "data.aws_region.current",
            "mode": "data",
            "type": "aws_region",
            "change": {"actions": ["read"], "after": {}},
        },
    ],
}


def test_reservations_are_every_planned_functions_and_minus_one_is_the_unreserved_pool() -> None:
    plan = from_plan_json("dev", PLAN)

    assert plan.reservations == {"outreach-dev-scraper": 140, "outreach-dev-dispatcher": None}
    assert plan.reserved_total == 140


def test_the_region_is_read_through_the_providers_variable_and_a_constant_as_written() -> None:
    constant = {
        **PLAN,
        "configuration": {
            "provider_config": {"aws": {"expressions": {"region": {"constant_value": "us-east-2"}}}}
        },
    }

    assert from_plan_json("dev", PLAN).region == "eu-west-1"
    assert from_plan_json("dev", constant).region == "us-east-2"


def test_allowed_accounts_variables_and_known_outputs_are_kept() -> None:
    plan = from_plan_json("dev", PLAN)

    assert plan.allowed_account_ids == ("111122223333",)
    assert plan.values["email_sender_identity"] == "mail.example.com"
    assert plan.values["dashboard_name"] == "outreach-dev"
    assert "pipeline" not in plan.values  # unknown until apply


def test_the_resources_are_every_change_or_only_the_managed_resources_that_stay() -> None:
    everything = resource_changes(PLAN, managed_only=False)
    kept = resource_changes(PLAN)

    assert [r.address for r in everything] == [c["address"] for c in PLAN["resource_changes"]]
    assert [r.values.get("function_name") for r in kept] == [
        "outreach-dev-scraper",
        "outreach-dev-dispatcher",
    ]
    assert everything[-1].values == {}


def test_terraforms_error_is_reduced_to_its_title_and_explanation() -> None:
    output = (
        "Plan: 42 to add, 0 to change, 0 to destroy.\n"
        "\nError: Invalid value for variable\n\n  on variables.tf line 24:\n"
        '  24: variable "alarm_emails" {\n    ├────────────────\n'
        "    │ var.alarm_emails is empty list of string\n\n"
        "prod needs someone to alarm: set alarm_emails (at least one address) or\n"
        "alarm_topic_arn (an existing topic).\n\n"
        "This was checked by the validation rule at variables.tf:29,3-13.\n"
    )

    assert first_error(output) == (
        "Invalid value for variable: prod needs someone to alarm: set alarm_emails (at least one "
        "address) or alarm_topic_arn (an existing topic)."
    )
