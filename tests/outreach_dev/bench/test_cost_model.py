"""Rules of the bench's cost model: billing units as the pricing pages define them, prices from the table."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from outreach_dev.bench.cost_model import (
    PRICES,
    PriceTable,
    PriceTableError,
    Usage,
    cost_per_thousand,
    dominant,
    dynamodb_items_written,
    dynamodb_units,
    fixed_daily_usd,
)


def _document() -> dict[str, Any]:
    return dict(json.loads(PRICES.read_text()))


def test_the_repo_price_table_names_its_region_date_and_a_source_for_every_price() -> None:
    table = PriceTable.load()
    assert table.region == "eu-central-1"
    assert table.recorded
    assert table.unit_usd["lambda_request"] == pytest.approx(0.2 / 1_000_000)


def test_a_price_without_a_source_is_refused() -> None:
    document = copy.deepcopy(_document())
    del document["prices"]["sqs_request"]["source"]
    with pytest.raises(PriceTableError, match="sqs_request"):
        PriceTable.parse(document)


def test_a_price_table_without_its_date_is_refused() -> None:
    document = copy.deepcopy(_document())
    del document["recorded"]
    with pytest.raises(PriceTableError, match="recorded"):
        PriceTable.parse(document)


def test_a_transaction_bills_two_write_units_per_item_and_a_plain_write_one() -> None:
    items: dict[str, Any] = {"TransactItems": [{"Put": {}}, {"Update": {}}, {"Update": {}}]}
    assert dynamodb_units("TransactWriteItems", items, 0) == (6.0, 0.0)
    assert dynamodb_items_written("TransactWriteItems", items) == 3
    assert dynamodb_units("UpdateItem", {}, 0) == (1.0, 0.0)
    assert dynamodb_items_written("GetItem", {}) == 0


def test_reads_bill_half_a_unit_per_4_kb_unless_strongly_consistent() -> None:
    assert dynamodb_units("GetItem", {}, 300) == (0.0, 0.5)
    assert dynamodb_units("GetItem", {"ConsistentRead": True}, 300) == (0.0, 1.0)
    assert dynamodb_units("Query", {}, 4096 * 2 + 1) == (0.0, 1.5)
    assert dynamodb_units("Query", {}, 10) == (0.0, 0.5)


def test_cost_per_thousand_tasks_multiplies_units_by_unit_prices_and_sums_them() -> None:
    # GIVEN one task costing one of each billable unit, and a table where every unit costs 1 micro-dollar
    prices = PriceTable("eu-central-1", "2026-11-30", dict.fromkeys(PriceTable.load().unit_usd, 1e-6))
    usage = Usage(1, 2, 3, 4, 5, 6, 7)
    # WHEN costed / THEN each service is its units x 1e-6 x 1,000 tasks, the total their sum
    costs = cost_per_thousand(usage, prices)
    assert costs["lambda_requests"] == pytest.approx(0.001)
    assert costs["lambda_duration"] == pytest.approx(0.002)
    assert costs["sqs"] == pytest.approx(0.003)
    assert costs["dynamodb"] == pytest.approx(0.009)
    assert costs["s3"] == pytest.approx(0.013)
    assert costs["total"] == pytest.approx(0.028)
    name, share = dominant(costs)
    assert name == "s3" and share == pytest.approx(0.013 / 0.028)


def test_the_fixed_daily_cost_is_per_run_schedule_invocation_and_duration() -> None:
    prices = PriceTable("eu-central-1", "2026-11-30", dict.fromkeys(PriceTable.load().unit_usd, 1.0))
    assert fixed_daily_usd(prices, runs_per_day=288, gb_seconds_per_run=0.5) == pytest.approx(288 * 2.5)
