"""`make local`'s campaign: a lawful campaign file for the applied identity, and its report's arithmetic."""

from __future__ import annotations

from outreach_dev.local_campaign import campaign_file, campaign_report, governor_report, report_lines
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


def test_the_report_shows_the_governors_decisions() -> None:
    scheduled = {
        "lint": [
            {"rule": "unsubscribe-link", "outcome": "passed"},
            {"rule": "data-source", "outcome": "not_applicable"},
        ],
        "pacing": {"domain_daily_cap": 50, "domain_min_gap_seconds": 120, "emails_moved": 7},
        "zones": {"sources": {"campaign": 30, "country": 2}},
    }
    governor = governor_report(scheduled)
    assert governor == {
        "lint": {"unsubscribe-link": "passed", "data-source": "not_applicable"},
        "pacing_moved": 7,
        "pacing": "50 a day, 120 s apart per domain",
        "zones": {"campaign": 30, "country": 2},
    }
    report = {
        "campaign_id": "c", "emails": 2, "recipients": 1, "rows_not_scheduled": 0, "sent_per_step": {},
        "ses_accepted": 0, "one_email_per_sent_task": True, "suppressed": 0, "suppressed_address": "",
        "not_sent_by_reason": {}, "still_open": 0, "governor": governor,
    }  # fmt: skip
    assert "  pacing         7 emails moved (50 a day, 120 s apart per domain)" in report_lines(report)
