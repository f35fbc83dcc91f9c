"""The contact ledger's table as modules/contact-ledger declares it, created on moto by name.

Read from the module's ``aws_dynamodb_table`` resource (``tasks_table_shape.module_table_definition``),
so tests run on the table Terraform creates: hash key ``contact_key``, no index, no stream.
"""

from __future__ import annotations

from typing import Any

import boto3

from outreach_dev.tasks_table_shape import module_table_definition

MODULE = "contact-ledger"


def table_definition() -> dict[str, Any]:
    """``CreateTable`` arguments (without the name) for the ledger's table."""
    return module_table_definition(MODULE)


def create_contacts_table(name: str, region: str) -> str:
    """Create the ledger's table as the module declares it; its name."""
    boto3.client("dynamodb", region_name=region).create_table(TableName=name, **table_definition())
    return name
