"""The tasks table as modules/tasks-table declares it, created on an in-process AWS (moto) by name.

The keys, attributes, indexes and stream are read from the module's ``aws_dynamodb_table`` resource,
so tests and benchmarks run on the table Terraform creates. ``module_table_definition`` reads any
module's table the same way (``contacts_table_shape`` reads modules/contact-ledger with it).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import boto3

from outreach_dev import terraform_hcl

MODULE = "tasks-table"


def _resolved(module: str, value: Any) -> Any:
    """A literal, or a ``local.`` of the module (an index name or a key may be one)."""
    text = terraform_hcl.strip(value)
    if isinstance(text, str) and text.startswith("local."):
        return terraform_hcl.named(terraform_hcl.load_module(terraform_hcl.module_dir(module)), "locals")[
            text.removeprefix("local.")
        ]
    return text


def _keys(module: str, block: dict[str, Any]) -> list[dict[str, str]]:
    keys = [{"AttributeName": str(_resolved(module, block["hash_key"])), "KeyType": "HASH"}]
    if block.get("range_key"):
        keys.append({"AttributeName": str(_resolved(module, block["range_key"])), "KeyType": "RANGE"})
    return keys


@cache
def module_table_definition(module: str) -> dict[str, Any]:
    """``CreateTable`` arguments (without the name) for the ``aws_dynamodb_table.this`` of ``module``."""
    table = terraform_hcl.resource(
        terraform_hcl.load_module(terraform_hcl.module_dir(module)), "aws_dynamodb_table", "this"
    )
    definition: dict[str, Any] = {
        "BillingMode": str(table["billing_mode"]),
        "AttributeDefinitions": [
            {"AttributeName": str(_resolved(module, a["name"])), "AttributeType": str(a["type"])}
            for a in table["attribute"]
        ],
        "KeySchema": _keys(module, table),
    }
    indexes = [
        {
            "IndexName": str(_resolved(module, index["name"])),
            "KeySchema": _keys(module, index),
            "Projection": {"ProjectionType": str(index["projection_type"])},
        }
        for index in table.get("global_secondary_index", [])
    ]
    if indexes:
        definition["GlobalSecondaryIndexes"] = indexes
    if table.get("stream_enabled") is True:
        definition["StreamSpecification"] = {
            "StreamEnabled": True,
            "StreamViewType": str(table["stream_view_type"]),
        }
    return definition


def table_definition() -> dict[str, Any]:
    """``CreateTable`` arguments (without the name) for the table the module declares."""
    return module_table_definition(MODULE)


def index_names() -> list[str]:
    return [index["IndexName"] for index in table_definition()["GlobalSecondaryIndexes"]]


def create_tasks_table(name: str, region: str) -> str:
    """Create the table with its indexes and stream as the module declares them; its stream ARN."""
    response = boto3.client("dynamodb", region_name=region).create_table(TableName=name, **table_definition())
    return str(response["TableDescription"]["LatestStreamArn"])
