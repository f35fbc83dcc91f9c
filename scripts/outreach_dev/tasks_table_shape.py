"""The tasks table as modules/tasks-table declares it, created on an in-process AWS (moto) by name.

The keys, attributes, indexes and stream are read from the module's ``aws_dynamodb_table`` resource,
so tests and benchmarks run on the table Terraform creates.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import boto3

from outreach_dev import terraform_hcl

MODULE = "tasks-table"


def _resolved(value: Any) -> Any:
    """A literal, or a ``local.`` of the module (the index name is one)."""
    text = terraform_hcl.strip(value)
    if isinstance(text, str) and text.startswith("local."):
        return terraform_hcl.named(terraform_hcl.load_module(terraform_hcl.module_dir(MODULE)), "locals")[
            text.removeprefix("local.")
        ]
    return text


def _keys(block: dict[str, Any]) -> list[dict[str, str]]:
    keys = [{"AttributeName": str(block["hash_key"]), "KeyType": "HASH"}]
    if block.get("range_key"):
        keys.append({"AttributeName": str(block["range_key"]), "KeyType": "RANGE"})
    return keys


@cache
def table_definition() -> dict[str, Any]:
    """``CreateTable`` arguments (without the name) for the table the module declares."""
    table = terraform_hcl.resource(
        terraform_hcl.load_module(terraform_hcl.module_dir(MODULE)), "aws_dynamodb_table", "this"
    )
    return {
        "BillingMode": str(table["billing_mode"]),
        "AttributeDefinitions": [
            {"AttributeName": str(a["name"]), "AttributeType": str(a["type"])} for a in table["attribute"]
        ],
        "KeySchema": _keys(table),
        "GlobalSecondaryIndexes": [
            {
                "IndexName": str(_resolved(index["name"])),
                "KeySchema": _keys(index),
                "Projection": {"ProjectionType": str(index["projection_type"])},
            }
            for index in table.get("global_secondary_index", [])
        ],
        "StreamSpecification": {
            "StreamEnabled": bool(table["stream_enabled"]),
            "StreamViewType": str(table["stream_view_type"]),
        },
    }


def index_names() -> list[str]:
    return [index["IndexName"] for index in table_definition()["GlobalSecondaryIndexes"]]


def create_tasks_table(name: str, region: str) -> str:
    """Create the table with its indexes and stream as the module declares them; its stream ARN."""
    response = boto3.client("dynamodb", region_name=region).create_table(TableName=name, **table_definition())
    return str(response["TableDescription"]["LatestStreamArn"])
