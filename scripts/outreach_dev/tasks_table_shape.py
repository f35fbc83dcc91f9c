"""The tasks table as modules/tasks-table declares it, created on an in-process AWS (moto) by name."""

from __future__ import annotations

import boto3


def create_tasks_table(name: str, region: str) -> str:
    """Create the table with its ``open-tasks`` index and NEW_AND_OLD_IMAGES stream; its stream ARN."""
    response = boto3.client("dynamodb", region_name=region).create_table(
        TableName=name,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[
            {"AttributeName": "task_id", "AttributeType": "S"},
            {"AttributeName": "open_key", "AttributeType": "S"},
            {"AttributeName": "updated_at", "AttributeType": "S"},
        ],
        KeySchema=[{"AttributeName": "task_id", "KeyType": "HASH"}],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "open-tasks",
                "KeySchema": [
                    {"AttributeName": "open_key", "KeyType": "HASH"},
                    {"AttributeName": "updated_at", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    )
    return str(response["TableDescription"]["LatestStreamArn"])
