"""Reading a plan for what it destroys: deletes and replacements count, moves and updates do not."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console

from outreach_dev.plan_changes import read_plan
from outreach_dev.upgrade_check import RootResult, render

QUEUE = "module.pipeline.module.scrape_pipeline.aws_sqs_queue.dlq"
MOVED_QUEUE = "module.pipeline.module.scrape_pipeline.module.dlq.aws_sqs_queue.this"
FUNCTION = "module.pipeline.module.scrape_pipeline.module.scraper.aws_lambda_function.this"


def _entry(address: str, *actions: str, mode: str = "managed", **extra: Any) -> dict[str, Any]:
    change = {"actions": list(actions), **extra.pop("change", {})}
    return {"address": address, "mode": mode, "type": address.rsplit(".", 2)[-2], "change": change, **extra}


def _plan(*entries: dict[str, Any]) -> dict[str, Any]:
    return {"format_version": "1.2", "resource_changes": list(entries)}


def test_a_delete_is_a_destroy() -> None:
    changes = read_plan(_plan(_entry(QUEUE, "delete", action_reason="delete_because_no_resource_config")))

    [destroyed] = changes.destroyed
    assert (destroyed.address, destroyed.kind) == (QUEUE, "delete")
    assert destroyed.reason == "delete_because_no_resource_config"


def test_a_replacement_either_way_round_is_a_destroy_and_names_what_forces_it() -> None:
    forced = {"replace_paths": [["name"]]}
    changes = read_plan(
        _plan(
            _entry(QUEUE, "delete", "create", change=forced, action_reason="replace_because_cannot_update"),
            _entry(FUNCTION, "create", "delete", change={"replace_paths": [["environment", 0, "variables"]]}),
        )
    )

    assert [(c.address, c.kind) for c in changes.destroyed] == [(QUEUE, "replace"), (FUNCTION, "replace")]
    assert changes.destroyed[0].replace_paths == (("name",),)
    assert changes.destroyed[1].replace_paths == (("environment", 0, "variables"),)


def test_a_move_keeps_the_object_and_names_where_it_was() -> None:
    changes = read_plan(_plan(_entry(MOVED_QUEUE, "no-op", previous_address=QUEUE)))

    assert changes.destroyed == []
    [moved] = changes.moved
    assert (moved.address, moved.previous_address, moved.kind) == (MOVED_QUEUE, QUEUE, "move")


def test_an_update_in_place_is_no_destroy_and_names_the_attributes_it_changes() -> None:
    update = {
        "before": {"source_code_hash": "old", "memory_size": 1536, "last_modified": "then"},
        "after": {"source_code_hash": "new", "memory_size": 1536},
        "after_unknown": {"last_modified": True, "environment": [{}]},
    }
    changes = read_plan(_plan(_entry(FUNCTION, "update", change=update)))

    assert changes.destroyed == []
    [updated] = changes.of_kind("update")
    assert updated.updated == ("source_code_hash",)


def test_an_update_that_only_awaits_apply_names_the_attributes_left_unknown() -> None:
    update = {"before": {"arn": "a"}, "after": {"arn": "a"}, "after_unknown": {"tags_all": {"x": True}}}

    [updated] = read_plan(_plan(_entry(FUNCTION, "update", change=update))).changes

    assert updated.updated == ("tags_all",)


def test_a_moved_instance_updated_in_place_counts_as_an_update_and_a_move_not_a_destroy() -> None:
    changes = read_plan(_plan(_entry(MOVED_QUEUE, "update", previous_address=QUEUE)))

    assert changes.destroyed == []
    assert (
        [c.address for c in changes.moved] == [c.address for c in changes.of_kind("update")] == [MOVED_QUEUE]
    )


def test_data_source_reads_and_unchanged_instances_are_left_out() -> None:
    changes = read_plan(
        _plan(
            _entry("data.aws_iam_policy_document.trust", "read", mode="data"),
            _entry(QUEUE, "no-op"),
            _entry("module.alarm_topic[0].aws_sns_topic.this", "create"),
        )
    )

    assert [(c.address, c.kind) for c in changes.changes] == [
        ("module.alarm_topic[0].aws_sns_topic.this", "create")
    ]
    assert changes.counts() == {"replace": 0, "delete": 0, "create": 1, "update": 0, "move": 0, "forget": 0}


def test_a_plan_without_changes_destroys_nothing() -> None:
    assert read_plan({"format_version": "1.2"}).destroyed == []


def test_a_root_destroys_when_its_plan_deletes_or_when_it_does_not_plan() -> None:
    deleting = RootResult("dev", changes=read_plan(_plan(_entry(QUEUE, "delete"))))
    moving = RootResult(
        "prod", changes=read_plan(_plan(_entry(MOVED_QUEUE, "no-op", previous_address=QUEUE)))
    )
    broken = RootResult("local", error="Unsupported argument")

    assert (deleting.destroys, moving.destroys, broken.destroys) == (True, False, True)
    assert deleting.as_json()["destroyed"] == [QUEUE]
    assert moving.as_json()["moved"] == [{"from": QUEUE, "to": MOVED_QUEUE}]


def test_the_report_lists_each_destroy_and_says_which_roots_have_one() -> None:
    out = io.StringIO()
    results = {
        "dev": RootResult("dev", changes=read_plan(_plan(_entry(QUEUE, "delete", "create")))),
        "prod": RootResult("prod", changes=read_plan(_plan())),
    }

    render("f0d015562719abcdef", results, Console(file=out, width=240, color_system=None))

    text = out.getvalue()
    assert "replace" in text and QUEUE in text
    assert "prod: working tree planned against f0d015562719's state: no changes" in text
    assert "DESTROYS in dev" in text
