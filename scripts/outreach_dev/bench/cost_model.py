"""Cost model: USD per 1,000 tasks from counted requests, measured GB-seconds and the repo's price table.

Billing units follow the AWS pricing pages: a DynamoDB write of an item up to 1 KB is one write
request unit (two inside a transaction), an eventually consistent read up to 4 KB half a read request
unit, a strongly consistent one a whole unit; every SQS API call is one request per 64 KB; S3 bills
PUT/LIST and GET classes separately; Lambda bills each invocation and memory x duration.
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/capacity-mode.html
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PRICES = Path(__file__).resolve().parents[3] / "bench" / "prices.json"
PRICE_NAMES = (
    "lambda_request",
    "lambda_gb_second",
    "sqs_request",
    "dynamodb_write_request_unit",
    "dynamodb_read_request_unit",
    "s3_put_request",
    "s3_get_request",
    "scheduler_invocation",
    "ses_email",
)


class PriceTableError(ValueError):
    """The price table lacks a price, or one is not a positive number."""


@dataclass(frozen=True)
class PriceTable:
    region: str
    recorded: str
    unit_usd: Mapping[str, float]  # price name -> USD per one unit

    @classmethod
    def parse(cls, document: Mapping[str, Any]) -> PriceTable:
        prices = document.get("prices", {})
        unit_usd: dict[str, float] = {}
        for name in PRICE_NAMES:
            entry = prices.get(name)
            if not isinstance(entry, Mapping) or not entry.get("source"):
                raise PriceTableError(f"price {name} is missing or has no source")
            usd, per = entry.get("usd"), entry.get("per")
            if not isinstance(usd, int | float) or not isinstance(per, int | float) or usd <= 0 or per <= 0:
                raise PriceTableError(f"price {name} needs positive usd and per, got {usd!r} per {per!r}")
            unit_usd[name] = float(usd) / float(per)
        region, recorded = document.get("region"), document.get("recorded")
        if not region or not recorded:
            raise PriceTableError("the price table must name its region and the date it was recorded")
        return cls(str(region), str(recorded), unit_usd)

    @classmethod
    def load(cls, path: Path = PRICES) -> PriceTable:
        return cls.parse(json.loads(path.read_text()))


@dataclass(frozen=True)
class Usage:
    """Billable units of one task on average (per-task figures; multiply by 1,000 for the table)."""

    lambda_invocations: float
    gb_seconds: float
    sqs_requests: float
    dynamodb_write_units: float
    dynamodb_read_units: float
    s3_put_requests: float
    s3_get_requests: float


def cost_per_thousand(usage: Usage, prices: PriceTable) -> dict[str, float]:
    """USD per 1,000 tasks by service, and their ``total``."""
    p = prices.unit_usd
    by_service = {
        "lambda_requests": usage.lambda_invocations * p["lambda_request"],
        "lambda_duration": usage.gb_seconds * p["lambda_gb_second"],
        "sqs": usage.sqs_requests * p["sqs_request"],
        "dynamodb": usage.dynamodb_write_units * p["dynamodb_write_request_unit"]
        + usage.dynamodb_read_units * p["dynamodb_read_request_unit"],
        "s3": usage.s3_put_requests * p["s3_put_request"] + usage.s3_get_requests * p["s3_get_request"],
    }
    per_thousand = {name: value * 1000 for name, value in by_service.items()}
    per_thousand["total"] = sum(per_thousand.values())
    return per_thousand


def dominant(costs: Mapping[str, float]) -> tuple[str, float]:
    """The service with the largest share of the total, and that share (0-1)."""
    parts = {name: value for name, value in costs.items() if name != "total"}
    total = sum(parts.values())
    if total <= 0:
        raise ValueError("no cost to share out")
    name = max(parts, key=lambda key: parts[key])
    return name, parts[name] / total


def fixed_daily_usd(prices: PriceTable, *, runs_per_day: int, gb_seconds_per_run: float) -> float:
    """What the scheduled reconciler costs a day whatever the load: schedule, invocation, duration."""
    p = prices.unit_usd
    return runs_per_day * (
        p["scheduler_invocation"] + p["lambda_request"] + gb_seconds_per_run * p["lambda_gb_second"]
    )


_WRITE_OPERATIONS = frozenset({"PutItem", "UpdateItem", "DeleteItem"})
_PAGED_READS = frozenset({"Query", "Scan", "BatchGetItem"})


def dynamodb_units(operation: str, params: Mapping[str, Any], response_bytes: int) -> tuple[float, float]:
    """(write units, read units) one DynamoDB call is billed, for items within 1 KB.

    A read that returns several items is billed per 4 KB of data read; the size of the answer on the
    wire stands in for it (a filter's discarded items are not seen, so a filtered Scan is under-counted).
    """
    if operation in _WRITE_OPERATIONS:
        return 1.0, 0.0
    if operation == "TransactWriteItems":
        return 2.0 * len(params.get("TransactItems", [])), 0.0
    if operation == "BatchWriteItem":
        return float(sum(len(requests) for requests in params.get("RequestItems", {}).values())), 0.0
    per_unit = 1.0 if params.get("ConsistentRead") else 0.5
    if operation == "GetItem":
        return 0.0, per_unit
    if operation in _PAGED_READS:
        return 0.0, per_unit * max(1, -(-response_bytes // 4096))
    return 0.0, 0.0


def dynamodb_items_written(operation: str, params: Mapping[str, Any]) -> int:
    """Items one DynamoDB write call writes (a transaction's or a batch's items each count)."""
    if operation in _WRITE_OPERATIONS:
        return 1
    if operation == "TransactWriteItems":
        return len(params.get("TransactItems", []))
    if operation == "BatchWriteItem":
        return sum(len(requests) for requests in params.get("RequestItems", {}).values())
    return 0
