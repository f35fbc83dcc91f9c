"""A root's settings as its plan has them: region, allowed accounts, reservations, values, errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from outreach_dev.planned_root import first_error, from_plan_json, override, resource_changes
from tests.support.terraform_roots import load_hcl


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


@pytest.mark.parametrize(
    ("receiving", "aliases"),
    [(True, [None, "receiving"]), (False, [None])],
    ids=["a root with receiving.tf", "a root without an aliased provider"],
)
def test_the_scratch_settings_go_to_every_aws_provider_the_root_defines_and_no_other(
    tmp_path: Path, receiving: bool, aliases: list[str | None]
) -> None:
    # GIVEN a root with its default AWS provider, and with or without an aliased one
    (tmp_path / "main.tf").write_text('provider "aws" {\n  region = var.region\n}\n', encoding="utf-8")
    if receiving:
        aliased = 'provider "aws" {\n  alias  = "receiving"\n  region = var.region\n}\n'
        (tmp_path / "receiving.tf").write_text(aliased, encoding="utf-8")

    # WHEN its override is written
    written = tmp_path / "scratch" / "preflight_override.tf"
    written.parent.mkdir()
    written.write_text(override(tmp_path), encoding="utf-8")
    document = load_hcl(written)

    # THEN a local backend, and the same fake credentials and no account pin in each configuration
    assert list(document) == ["terraform", "provider"]
    providers = [block["aws"] for block in document["provider"]]
    assert [p.pop("alias", None) for p in providers] == aliases
    assert all(p == providers[0] for p in providers)
    assert providers[0]["access_key"] == "test"
    assert providers[0]["allowed_account_ids"] is None
