"""A pytest plugin that records which AWS operations each Lambda handler module performs.

Load it with ``-p tests.support.aws_operation_recorder`` and name, in the environment,
``AWS_OPERATIONS_FILE`` (where the recording is written when the session ends) and
``AWS_OPERATIONS_HANDLERS`` (comma-separated handler modules, e.g. ``outreach.scraper``). A run can
also record in-process (``install``), only while its ``active`` flag is set
(``tests/iam/session_recording.py``).

Every client the core creates (``outreach.clients``) gets a ``provide-client-params`` hook on its
own event system when it is made; a hook on boto3's default session would not do, because moto
swaps that session out while a mock is active. The hook attributes a call to the innermost handler
module on the Python stack, so calls a test makes itself (setting up rows, reading queues) are not
recorded, and calls a handler makes through ``outreach.task_store`` or ``outreach.results`` are.
Each record keeps the operation, the service's signing name, the resource parameters, and which
environment variables held those resource names: the functions find their resources only through
their environment. The resource parameters are the names of tables, indexes, queues, buckets and
keys, Scheduler's group and schedule name and the role a schedule's target is given
(``Target.RoleArn``, kept as ``RoleArn``), SES's sender address and configuration set, and the KMS
key a MAC is made or verified with (``KeyId``).
https://boto3.amazonaws.com/v1/documentation/api/latest/guide/events.html
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from outreach import clients

FILE_VARIABLE = "AWS_OPERATIONS_FILE"
HANDLERS_VARIABLE = "AWS_OPERATIONS_HANDLERS"

_SCALAR_RESOURCE_PARAMETERS = (
    "TableName",
    "IndexName",
    "QueueUrl",
    "Bucket",
    "Key",
    "GroupName",
    "Name",
    "ConfigurationSetName",
    "FromEmailAddress",
    "KeyId",
)
# Resource names a function can only have from its environment (the sender address is campaign data).
_ENVIRONMENT_NAMED_PARAMETERS = (
    "TableName",
    "QueueUrl",
    "Bucket",
    "GroupName",
    "ConfigurationSetName",
    "RoleArn",
    "KeyId",
)
# The transaction's item kinds, each naming its table (TransactWriteItems, TransactGetItems).
_TRANSACT_ITEM_KINDS = ("Put", "Update", "Delete", "ConditionCheck", "Get")
# Single-item DynamoDB operations and where their key is.
_ITEM_OPERATIONS = {"GetItem": "Key", "UpdateItem": "Key", "DeleteItem": "Key", "PutItem": "Item"}
# One ``attribute = :value`` term of a key condition (the partition key's is always an equality).
_EQUALITY = re.compile(r"^\(?\s*(#?[A-Za-z0-9_.]+)\s*=\s*(:[A-Za-z0-9_]+)\s*\)?$")


class _Recorder:
    def __init__(self, handlers: frozenset[str]) -> None:
        self.handlers = handlers
        self.records: dict[str, dict[str, Any]] = {}
        self.active = True

    def sorted_records(self) -> list[dict[str, Any]]:
        return [self.records[key] for key in sorted(self.records)]

    def handler_on_stack(self) -> str | None:
        frame = sys._getframe(2)
        while frame is not None:
            name = frame.f_globals.get("__name__")
            if name in self.handlers:
                return str(name)
            frame = frame.f_back  # type: ignore[assignment]
        return None

    def record(self, params: dict[str, Any], model: Any, **_: Any) -> None:
        if not self.active:
            return
        handler = self.handler_on_stack()
        if handler is None:
            return
        resources = _resource_parameters(params)
        record = {
            "handler": handler,
            "signing_name": model.service_model.signing_name,
            "operation": model.name,
            "resources": resources,
            "environment": _environment_holding(resources),
        }
        if model.service_model.signing_name == "dynamodb":
            record["items"] = _item_keys(model.name, params)
        self.records[json.dumps(record, sort_keys=True)] = record


def _resource_parameters(params: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {
        k: params[k] for k in _SCALAR_RESOURCE_PARAMETERS if isinstance(params.get(k), str)
    }
    items = params.get("TransactItems")
    if isinstance(items, list):
        found["TransactItems"] = sorted(
            [kind, item[kind]["TableName"]] for item in items for kind in _TRANSACT_ITEM_KINDS if kind in item
        )
    target = params.get("Target")
    if isinstance(target, dict) and isinstance(target.get("RoleArn"), str):
        found["RoleArn"] = target["RoleArn"]
    request_items = params.get("RequestItems")
    if isinstance(request_items, dict):
        found["RequestItems"] = sorted(request_items)
    return found


def _scalars(attributes: Any) -> dict[str, str]:
    """The string and number attributes of a low-level item or key (``{"S": ...}``, ``{"N": ...}``)."""
    if not isinstance(attributes, dict):
        return {}
    return {
        name: str(value.get("S", value.get("N")))
        for name, value in attributes.items()
        if isinstance(value, dict) and ("S" in value or "N" in value)
    }


def _key_condition(params: dict[str, Any]) -> dict[str, str]:
    """The ``attribute = value`` terms of a Query's ``KeyConditionExpression``, names and values resolved."""
    expression = params.get("KeyConditionExpression")
    if not isinstance(expression, str):
        return {}
    names = params.get("ExpressionAttributeNames") or {}
    values = _scalars(params.get("ExpressionAttributeValues") or {})
    found: dict[str, str] = {}
    for term in re.split(r"\s+AND\s+", expression.strip(), flags=re.IGNORECASE):
        match = _EQUALITY.match(term.strip())
        if match and match.group(2) in values:
            found[str(names.get(match.group(1), match.group(1)))] = values[match.group(2)]
    return found


def _item_keys(operation: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    """One entry per item (or per table of a BatchGetItem, or per Query) with the key values it names."""
    if operation in _ITEM_OPERATIONS:
        return [
            {
                "kind": operation,
                "table": params.get("TableName"),
                "keys": [_scalars(params.get(_ITEM_OPERATIONS[operation]))],
            }
        ]
    if operation in ("TransactWriteItems", "TransactGetItems"):
        entries = []
        for item in params.get("TransactItems") or []:
            for kind in _TRANSACT_ITEM_KINDS:
                if kind in item:
                    where = "Item" if kind == "Put" else "Key"
                    entries.append(
                        {
                            "kind": kind,
                            "table": item[kind].get("TableName"),
                            "keys": [_scalars(item[kind].get(where))],
                        }
                    )
        return entries
    if operation == "BatchGetItem":
        return [
            {"kind": operation, "table": table, "keys": [_scalars(key) for key in request.get("Keys") or []]}
            for table, request in sorted((params.get("RequestItems") or {}).items())
        ]
    if operation == "Query":
        entry: dict[str, Any] = {
            "kind": operation,
            "table": params.get("TableName"),
            "keys": [_key_condition(params)],
        }
        if isinstance(params.get("IndexName"), str):
            entry["index"] = params["IndexName"]
        return [entry]
    return []


def _names(resources: dict[str, Any]) -> Iterator[str]:
    for key in _ENVIRONMENT_NAMED_PARAMETERS:
        if key in resources:
            yield resources[key]
    for _, table in resources.get("TransactItems", []):
        yield table
    yield from resources.get("RequestItems", [])


def _environment_holding(resources: dict[str, Any]) -> dict[str, list[str]]:
    """For each resource name, the environment variables whose value it is."""
    return {
        name: sorted(variable for variable, value in os.environ.items() if value == name)
        for name in sorted(set(_names(resources)))
    }


def install(handlers: frozenset[str]) -> _Recorder:
    """Record, from now on in this process, the calls of ``handlers`` through ``outreach.clients``."""
    recorder = _Recorder(handlers)
    make_client = clients._client

    def recorded_client(service: str) -> Any:
        client = make_client(service)
        client.meta.events.register(
            "provide-client-params", recorder.record, unique_id="aws-operation-recorder"
        )
        return client

    clients.reset()
    clients._client = recorded_client
    return recorder


_recorder: _Recorder | None = None


def pytest_configure(config: pytest.Config) -> None:
    global _recorder
    if FILE_VARIABLE not in os.environ or HANDLERS_VARIABLE not in os.environ:
        raise pytest.UsageError(f"the AWS operation recorder needs {FILE_VARIABLE} and {HANDLERS_VARIABLE}")
    _recorder = install(frozenset(h.strip() for h in os.environ[HANDLERS_VARIABLE].split(",") if h.strip()))


def pytest_unconfigure(config: pytest.Config) -> None:
    if _recorder is None:
        return
    Path(os.environ[FILE_VARIABLE]).write_text(json.dumps(_recorder.sorted_records(), indent=1))
