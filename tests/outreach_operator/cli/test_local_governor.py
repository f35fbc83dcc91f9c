"""`make local`'s governor demo: its recipients make the planner pace and zone, and its report counts the
first contacts the workers deferred and whether any was lost."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from outreach_dev import local_governor
from outreach_dev.local_campaign import campaign_file
from outreach_operator.campaigns.campaign_file import parse_campaign
from outreach_operator.campaigns.compliance.lint import lint_campaign
from tests.outreach_operator.cli.campaign_support import schedule_example as _schedule
from tests.outreach_operator.cli.conftest import Run, as_json

JOB_ROWS = [
    {"email": "info@site1.example", "company": "Site 1", "timezone": ""},
    {"email": "hello@site2.example", "company": "Site 2", "timezone": ""},
]


def _files(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    campaign = campaign_file("local-1-campaign", "outreach.test")
    main = tmp_path / "campaign.json"
    main.write_text(json.dumps(campaign))
    second = tmp_path / "second.json"
    second.write_text(json.dumps(local_governor.second_campaign_file(campaign, "local-1-second")))
    everyone = local_governor.write_recipients(tmp_path / "all.csv", [*local_governor.busy_rows(), *JOB_ROWS])
    shared = local_governor.write_recipients(tmp_path / "shared.csv", local_governor.shared_rows())
    return main, second, everyone, shared


@pytest.mark.usefixtures("ses_account")
def test_make_locals_recipients_make_the_planner_pace_two_busy_domains_and_use_every_zone_source(
    run: Run, email_flags: list[str], tmp_path: Path
) -> None:
    main, second, everyone, shared = _files(tmp_path)
    # make local's campaign links the environment's one-click endpoint; a dry run needs only its URL
    flags = [*email_flags, "--unsubscribe-url", "https://unsubscribe.outreach.example/"]

    report = as_json(_schedule(run, flags, "--dry-run", recipients=everyone, campaign=main))

    assert report["recipients_scheduled"] == len(local_governor.BUSY_DOMAINS) * local_governor.PER_DOMAIN + 2
    # every first step to a busy domain but its first waits for the domain's gap (the follow-ups, a day
    # later, keep that spacing without being moved)
    moved = len(local_governor.BUSY_DOMAINS) * (local_governor.PER_DOMAIN - 1)
    assert report["pacing"]["emails_moved"] >= moved
    steps = len(campaign_file("c", "outreach.test")["steps"])
    busiest = {entry["domain"]: entry["emails"] for entry in report["pacing"]["busiest_domains"]}
    assert {domain: busiest[domain] for domain in local_governor.BUSY_DOMAINS} == {
        domain: steps * local_governor.PER_DOMAIN for domain in local_governor.BUSY_DOMAINS
    }
    sources = report["zones"]["sources"]
    assert set(sources) == {"column", "country", "campaign"}
    assert sources["column"] == 2 * len(local_governor.BUSY_DOMAINS) * local_governor.PER_DOMAIN // 3
    assert {"America/New_York", "Asia/Tokyo", "Europe/Berlin"} <= {e["zone"] for e in report["zones"]["plan"]}

    second_report = as_json(_schedule(run, flags, "--dry-run", recipients=shared, campaign=second))
    assert (
        second_report["emails"] == second_report["recipients_scheduled"] == len(local_governor.shared_rows())
    )
    assert second_report["start"] == report["start"]
    assert lint_campaign(parse_campaign(json.loads(second.read_text()))).refused == ()


def _row(step: int, status: str, *, deferred: bool, sent_at: str = "2026-12-04T10:15:00Z") -> dict[str, Any]:
    row: dict[str, Any] = {"step": step, "status": status, "send_at": sent_at}
    if status == "Finished":
        row["ses_message_id"] = "m"
    if deferred:
        row.update(deferred_from="2026-12-04T10:00:00Z", deferred_reason="first_contact_limit: another")
    return row


def test_first_contact_deferrals_count_the_deferred_first_steps_and_those_sent_later() -> None:
    rows = {
        "c": [
            _row(1, "Finished", deferred=True),
            _row(1, "Finished", deferred=False),
            _row(2, "Finished", deferred=False),
        ],
        "c-second": [_row(1, "Finished", deferred=True), _row(1, "Finished", deferred=True)],
    }
    assert local_governor.first_contact_deferrals(rows) == {
        "deferred": 3,
        "per_campaign": {"c": 1, "c-second": 2},
        "sent_later": 3,
        "not_sent_later": {},
        "lost": 0,
    }


def test_a_deferred_first_contact_still_open_or_ended_unsent_counts_as_lost() -> None:
    rows = {
        "c": [_row(1, "Pending", deferred=True), _row(1, "Failed", deferred=True)],
        "c-second": [_row(1, "Finished", deferred=True, sent_at="2026-12-04T10:00:00Z")],
    }
    counted = local_governor.first_contact_deferrals(rows)
    assert (counted["deferred"], counted["sent_later"], counted["lost"]) == (3, 0, 3)
    assert counted["not_sent_later"] == {"Pending": 1, "Failed": 1, "Finished": 1}
