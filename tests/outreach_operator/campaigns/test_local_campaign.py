"""`make local`'s campaign: a lawful campaign file for the applied identity, and its report's arithmetic."""

from __future__ import annotations

from typing import Any

from outreach_dev.local_campaign import (
    campaign_file,
    campaign_ok,
    campaign_report,
    governor_report,
    report_lines,
)
from outreach_operator.campaigns.campaign_file import parse_campaign
from outreach_operator.campaigns.compliance.lint import lint_campaign
from outreach_operator.campaigns.ses_identity import identity_covers


def test_local_campaign_file_is_valid_and_sent_from_the_identity() -> None:
    for identity in ("outreach.test", "sales@outreach.test"):
        campaign = parse_campaign(campaign_file("local-1-campaign", identity))
        assert identity_covers(identity, campaign.sender)
        assert [step.after_days for step in campaign.steps] == [0, 1]
        assert len(campaign.window.weekday_numbers) == 7
        assert lint_campaign(campaign).refused == ()


def test_campaign_report_counts_sent_suppressed_and_open_emails() -> None:
    status = {
        "campaign_id": "c",
        "counts": {"Pending": 0, "Running": 1, "Finished": 5, "Failed": 1, "Cancelled": 1},
        "steps": [
            {"step": 1, "Pending": 0, "Running": 0, "Finished": 3, "Failed": 1, "Cancelled": 0},
            {"step": 2, "Pending": 0, "Running": 1, "Finished": 2, "Failed": 0, "Cancelled": 1},
        ],
        "reasons": [
            {"status": "Failed", "reason": "suppressed", "emails": 1},
            {"status": "Cancelled", "reason": "earlier_step_not_sent", "emails": 1},
        ],
    }
    scheduled = {"recipients_scheduled": 4, "emails": 8, "rejected": [{"row": 5}]}
    report = campaign_report(scheduled, status, ses_accepted=5, suppressed_address="a@b.example")
    assert report["sent_per_step"] == {"1": 3, "2": 2}
    assert (report["suppressed"], report["still_open"], report["rows_not_scheduled"]) == (1, 1, 1)
    assert report["one_email_per_sent_task"] is True
    assert campaign_report(scheduled, status, 6, "")["one_email_per_sent_task"] is False


def _sent_report(campaign_id: str, *, still_open: int = 0, accepted: int = 8) -> dict[str, Any]:
    return {
        "campaign_id": campaign_id, "emails": 8, "recipients": 8, "rows_not_scheduled": 0,
        "sent_per_step": {"1": 8 - still_open}, "ses_accepted": accepted,
        "one_email_per_sent_task": accepted == 8 - still_open, "suppressed": 0, "suppressed_address": "",
        "not_sent_by_reason": {}, "still_open": still_open,
    }  # fmt: skip


def _governor(*, lost: int = 0, second_open: int = 0) -> dict[str, Any]:
    scheduled = {
        "lint": [
            {"rule": "unsubscribe-link", "outcome": "passed"},
            {"rule": "data-source", "outcome": "not_applicable"},
        ],
        "pacing": {"domain_daily_cap": 50, "domain_min_gap_seconds": 120, "emails_moved": 7},
        "zones": {
            "sources": {"campaign": 30, "column": 16, "country": 2},
            "plan": [
                {"zone": "Asia/Tokyo", "day": "2026-12-04", "hour": "09:00", "emails": 3},
                {"zone": "Asia/Tokyo", "day": "2026-12-05", "hour": "09:00", "emails": 3},
                {"zone": "Europe/Berlin", "day": "2026-12-04", "hour": "01:00", "emails": 40},
            ],
        },
    }
    first_contacts = {
        "deferred": 4,
        "per_campaign": {"c": 1, "c-second": 3},
        "sent_later": 4 - lost,
        "not_sent_later": {"Failed": lost} if lost else {},
        "lost": lost,
    }
    return governor_report(scheduled, first_contacts, _sent_report("c-second", still_open=second_open))


def test_the_report_shows_the_governors_decisions() -> None:
    governor = _governor()
    assert {key: governor[key] for key in ("lint", "pacing_moved", "pacing", "zones", "zone_emails")} == {
        "lint": {"unsubscribe-link": "passed", "data-source": "not_applicable"},
        "pacing_moved": 7,
        "pacing": "50 a day, 120 s apart per domain",
        "zones": {"campaign": 30, "column": 16, "country": 2},
        "zone_emails": {"Asia/Tokyo": 6, "Europe/Berlin": 40},
    }
    report = {**_sent_report("c"), "governor": governor}
    lines = report_lines(report)
    assert "  pacing         7 emails moved (50 a day, 120 s apart per domain)" in lines
    assert "  per zone       {'Asia/Tokyo': 6, 'Europe/Berlin': 40}" in lines
    assert "  first contacts 4 deferred at send time {'c': 1, 'c-second': 3}, 4 sent later, lost 0" in lines
    assert (
        "  second campaign c-second: 8 emails to 8 shared recipients, sent 8, SES accepted 8, still open 0"
        in lines
    )


def test_make_local_fails_when_a_deferred_first_contact_is_lost_or_the_second_campaign_is_open() -> None:
    assert campaign_ok({**_sent_report("c"), "governor": _governor()})
    assert not campaign_ok({**_sent_report("c"), "governor": _governor(lost=1)})
    assert not campaign_ok({**_sent_report("c"), "governor": _governor(second_open=1)})
    assert not campaign_ok({**_sent_report("c", still_open=1), "governor": _governor()})
