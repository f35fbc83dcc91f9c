"""What ``campaign schedule`` shows of the send governor: each recipient zone's local days and hours,
and the domain pacing's settings and busiest domains, in JSON and as tables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.outreach_operator.cli.campaign_support import CAMPAIGN, START, csv_file
from tests.outreach_operator.cli.campaign_support import schedule_example as _schedule
from tests.outreach_operator.cli.conftest import Run, as_json

pytestmark = pytest.mark.usefixtures("ses_account")


def test_a_dry_run_shows_each_recipient_zones_local_days_and_hours_and_the_domain_pacing(
    run: Run, email_flags: list[str], tmp_path: Path
) -> None:
    recipients = csv_file(
        tmp_path,
        "email,company,website,timezone\n"
        "a@shop.example,A,https://shop.example/,America/New_York\n"
        "b@laden.de,B,https://laden.de/,\n"
        "c@shop.example,C,https://shop.example/,\n",
    )
    report = as_json(_schedule(run, email_flags, "--dry-run", recipients=recipients))
    assert report["zones"]["sources"] == {"column": 1, "country": 1, "campaign": 1}
    firsts = {(r["zone"], r["day"], r["hour"]) for r in report["zones"]["plan"]}
    # Monday 1 March 2027, 08:00 UTC: 09:00 in Berlin, and New York's window opens at 09:00 there.
    assert {("Europe/Berlin", "2027-03-01", "09:00"), ("America/New_York", "2027-03-01", "09:00")} <= firsts
    pacing = report["pacing"]
    assert (pacing["domain_daily_cap"], pacing["domain_min_gap_seconds"]) == (50, 120)
    assert pacing["busiest_domains"][0] == {
        "domain": "shop.example",
        "emails": 4,
        "days": 2,
        "most_in_a_day": 2,
    }
    table = run(
        "campaign", "schedule", "--campaign", str(CAMPAIGN), "--recipients", str(recipients),
        "--start", START, "--dry-run", extra=email_flags,
    )  # fmt: skip
    assert table.exit_code == 0, table.output
    assert "recipients' local days and hours" in table.stdout and "America/New_York" in table.stdout
    assert "domain pacing: at most 50 a local day and 120 s apart per domain" in table.stdout


def test_a_dry_run_names_the_phone_and_the_language_among_the_zone_sources_and_refuses_a_bad_one(
    run: Run, email_flags: list[str], tmp_path: Path
) -> None:
    header = "email,company,website,phone,language\n"
    recipients = csv_file(
        tmp_path,
        header + "a@shop.example,A,https://shop.example/,+81 3 3580 3311,de\n"
        "b@shop.example,B,https://shop.example/,,ja\n"
        "c@shop.example,C,https://shop.example/,+1 212 639 2000,en\n",
    )
    report = as_json(_schedule(run, email_flags, "--dry-run", recipients=recipients))
    assert report["zones"]["sources"] == {"phone": 1, "language": 1, "campaign": 1}
    assert {r["zone"] for r in report["zones"]["plan"]} == {"Asia/Tokyo", "Europe/Berlin"}
    table = run(
        "campaign", "schedule", "--campaign", str(CAMPAIGN), "--recipients", str(recipients),
        "--start", START, "--dry-run", extra=email_flags,
    )  # fmt: skip
    assert table.exit_code == 0, table.output
    assert "zones: 1 by campaign, 1 by language, 1 by phone" in table.stdout

    bad = csv_file(
        tmp_path,
        header
        + "a@shop.example,A,https://shop.example/,030 2093 4567,\nb@shop.example,B,https://shop.example/,,German\n",
    )
    refused = _schedule(run, email_flags, "--dry-run", recipients=bad)
    assert refused.exit_code == 2, refused.output
    assert [(r["row"], r["reason"].split(":")[0]) for r in json.loads(refused.stdout)["rejected"]] == [
        (2, "phone"),
        (3, "language"),
    ]


def test_a_warming_identitys_plan_holds_each_utc_day_under_its_cap_and_shows_planned_vs_cap(
    run: Run, email_flags: list[str], tmp_path: Path
) -> None:
    recipients = csv_file(
        tmp_path,
        "email,company,website\n" + "".join(f"p{n}@firm{n}.de,F{n},https://firm{n}.de/\n" for n in range(5)),
    )
    ramp = ["--email-warmup-start-date", "2027-03-01", "--email-warmup-daily-caps", "3,4"]
    report = as_json(_schedule(run, [*email_flags, *ramp], "--dry-run", recipients=recipients))
    # 5 recipients, 2 steps: 3 first steps on day 1, 2 held back to day 2; the follow-ups 3 days later.
    assert report["emails"] == 10
    warmup = report["warmup"]
    assert (warmup["start_date"], warmup["last_day"], warmup["max_24_hour_send"]) == (
        "2027-03-01",
        "2027-03-02",
        50_000.0,
    )
    assert warmup["days"] == [
        {"day": "2027-03-01", "planned": 3, "cap": 3},
        {"day": "2027-03-02", "planned": 2, "cap": 4},
    ]
    table = run(
        "campaign", "schedule", "--campaign", str(CAMPAIGN), "--recipients", str(recipients),
        "--start", START, "--dry-run", extra=[*email_flags, *ramp],
    )  # fmt: skip
    assert table.exit_code == 0, table.output
    assert "warm-up ramp from 2027-03-01 to 2027-03-02" in table.stdout


def test_without_the_environments_ramp_the_report_says_the_worker_enforces_it(
    run: Run, email_flags: list[str]
) -> None:
    report = as_json(_schedule(run, email_flags, "--dry-run"))
    assert report["warmup"] == {
        "known": False,
        "reason": "neither --env nor --email-warmup-* gave it: the worker enforces the ramp at send time",
    }
