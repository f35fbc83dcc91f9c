"""How the tasks table is spoken to: attribute values, the one paginated reader, a refused write.

Every read of the table (the Lambda code, the operator's command line, the emulator's driver) goes
through ``pages``/``rows`` (Query and Scan, page by page, lazily) or ``batch_get`` (BatchGetItem, 100
keys a call, ``UnprocessedKeys`` asked for again until none is left). The contact ledger's table is
read through the same ``batch_get``, by its own key (``contacts.reads``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError

from outreach import clients, config

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import KeysAndAttributesTypeDef

# DynamoDB's limit of keys in one BatchGetItem.
BATCH_GET_LIMIT = 100

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()


def to_av(value: Any) -> Any:
    """``value`` as a DynamoDB attribute value."""
    return _serializer.serialize(value)


def to_avs(values: Mapping[str, Any]) -> dict[str, Any]:
    """Each value of ``values`` as a DynamoDB attribute value, under the same name."""
    return {name: to_av(value) for name, value in values.items()}


def from_item(item: Mapping[str, Any]) -> dict[str, Any]:
    """A stored item as plain values (numbers as ``Decimal``)."""
    return {name: _deserializer.deserialize(value) for name, value in item.items()}


@dataclass
class IndexRead:
    """What a read cost: items DynamoDB read (``ScannedCount``) and pages (Query or Scan calls)."""

    items: int = 0
    pages: int = 0


def pages(
    operation: Literal["query", "scan"],
    request: Mapping[str, Any],
    *,
    table: str | None = None,
    cost: IndexRead | None = None,
) -> Iterator[Mapping[str, Any]]:
    """The pages of one Query or Scan of the tasks table (``table``, else the configured one), lazily.

    A caller that stops early reads no further page; ``cost`` accumulates what was read.
    """
    call = {"TableName": table or config.tasks_table(), **request}
    while True:
        dynamodb = clients.dynamodb()
        page = dynamodb.query(**call) if operation == "query" else dynamodb.scan(**call)
        if cost is not None:
            cost.pages += 1
            cost.items += int(page.get("ScannedCount", len(page.get("Items", []))))
        yield page
        last = page.get("LastEvaluatedKey")
        if not last:
            return
        call["ExclusiveStartKey"] = last


def rows(
    operation: Literal["query", "scan"],
    request: Mapping[str, Any],
    *,
    table: str | None = None,
    cost: IndexRead | None = None,
) -> Iterator[dict[str, Any]]:
    """The items of ``pages(operation, request)``, as plain values, lazily."""
    for page in pages(operation, request, table=table, cost=cost):
        for item in page.get("Items", []):
            yield from_item(item)


def batch_get(
    task_ids: Sequence[str],
    *,
    attributes: Sequence[str] = (),
    table: str | None = None,
    key_name: str = "task_id",
) -> list[dict[str, Any]]:
    """The rows of ``task_ids`` that exist, as plain values, with strongly consistent reads.

    With ``attributes``, only the key and those are read. Keys DynamoDB leaves unprocessed are asked
    for again until none is left. ``table`` and ``key_name`` (its hash key) name another table than
    the tasks table. Each id is asked for once (BatchGetItem refuses a key named twice).
    """
    table_name = table or config.tasks_table()
    names = {f"#a{i}": name for i, name in enumerate([key_name, *attributes])}
    distinct = list(dict.fromkeys(task_ids))
    found: list[dict[str, Any]] = []
    for start in range(0, len(distinct), BATCH_GET_LIMIT):
        keys: list[dict[str, Any]] = [
            {key_name: to_av(task_id)} for task_id in distinct[start : start + BATCH_GET_LIMIT]
        ]
        while keys:
            ask: KeysAndAttributesTypeDef = {"Keys": keys, "ConsistentRead": True}
            if attributes:
                ask["ProjectionExpression"] = ", ".join(names)
                ask["ExpressionAttributeNames"] = names
            response = clients.dynamodb().batch_get_item(RequestItems={table_name: ask})
            found.extend(from_item(item) for item in response.get("Responses", {}).get(table_name, []))
            unprocessed = response.get("UnprocessedKeys", {})
            keys = list(unprocessed[table_name]["Keys"]) if table_name in unprocessed else []
    return found


def cancellation_codes(error: ClientError) -> list[str]:
    """The code of each action of a cancelled transaction, in order (``None`` for one that passed)."""
    reasons = error.response.get("CancellationReasons", [])
    return [str(reason.get("Code", "None")) for reason in reasons]


def is_condition_failure(error: ClientError) -> bool:
    """Whether a write was refused for its condition (alone, or as part of a transaction)."""
    code = error.response.get("Error", {}).get("Code", "")
    if code == "ConditionalCheckFailedException":
        return True
    return code == "TransactionCanceledException" and "ConditionalCheckFailed" in cancellation_codes(error)


def is_throttled(error: ClientError) -> bool:
    """Whether a transaction was cancelled because a table or index partition was throttled
    (``ThrottlingError``, https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html):
    nothing was written, and the SDK's retries do not repeat it."""
    code = error.response.get("Error", {}).get("Code", "")
    return code == "TransactionCanceledException" and "ThrottlingError" in cancellation_codes(error)
