"""The declared transition rules and the one paginated reader of the tasks table."""

from __future__ import annotations

from typing import Any

import pytest

from outreach import clients, task_store
from outreach.task_model import ALLOWED_TRANSITIONS, OPEN, Kind, Status
from tests.support.aws import Resources


def test_every_rule_but_the_operators_requeue_stays_within_the_allowed_transitions() -> None:
    for rule in task_store.RULES.values():
        for status in rule.from_statuses:
            if rule.override:
                assert rule.verb == "operator requeue"
            elif rule.to is not None:
                assert rule.to in ALLOWED_TRANSITIONS[status], (rule.verb, status)
            else:
                assert status in OPEN, rule.verb


def test_a_rule_is_applied_only_with_exactly_the_fields_it_declares(resources: Resources) -> None:
    created = task_store.create_scrape_job("job-1", ["https://example.com"])
    task = task_store.get_task(created.created[0])
    assert task is not None
    with pytest.raises(ValueError, match="sets"):
        task_store.apply(task_store.RULES["cancel"], task, {"summary": {}})
    assert task_store.job_counts("job-1")["Pending"] == 1


def test_the_reader_pages_lazily_and_counts_what_it_read(
    resources: Resources, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One shard: every page is of the one key (tests/functions/test_open_index_shards.py reads several).
    monkeypatch.setenv("OPEN_INDEX_SHARDS", "1")
    task_store.create_scrape_job("job-1", [f"https://site{i}.example" for i in range(5)])
    cost = task_store.IndexRead()
    found = task_store.open_index_rows(Kind.SCRAPE, Status.PENDING, page_size=2, cost=cost)
    first = next(found)
    assert first["status"] == Status.PENDING.value
    assert (cost.pages, cost.items) == (1, 2)
    assert len([first, *found]) == 5
    assert cost.pages == 3


def test_keys_batch_get_leaves_unprocessed_are_asked_for_again(
    resources: Resources, monkeypatch: pytest.MonkeyPatch
) -> None:
    created = task_store.create_scrape_job("job-1", [f"https://site{i}.example" for i in range(3)])
    real: Any = clients.dynamodb()
    calls: list[int] = []

    class Throttled:
        def batch_get_item(self, **request: Any) -> dict[str, Any]:
            (table, ask), *_ = request["RequestItems"].items()
            calls.append(len(ask["Keys"]))
            if len(calls) > 1:
                return dict(real.batch_get_item(**request))
            first, *rest = ask["Keys"]
            answer = dict(real.batch_get_item(RequestItems={table: {**ask, "Keys": [first]}}))
            answer["UnprocessedKeys"] = {table: {**ask, "Keys": rest}}
            return answer

    monkeypatch.setattr(clients, "dynamodb", Throttled)
    rows = task_store.batch_get(created.created, attributes=["status"])
    assert calls == [3, 2]
    assert sorted(row["task_id"] for row in rows) == sorted(created.created)
    assert all(set(row) == {"task_id", "status"} for row in rows)
