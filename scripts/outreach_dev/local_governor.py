"""`make local`'s send governor at work: two busy recipient domains, recipients' own zones, a second
campaign sharing some addresses, and the report of what the governor decided.

The campaign's recipients file holds, besides the addresses the scrape job found, ``PER_DOMAIN``
recipients at each of ``BUSY_DOMAINS``, whose ``timezone`` column cycles through ``ZONES`` (an empty
cell leaves the zone to the address's country, ``.de`` Europe/Berlin, else to the campaign's window).
The planner's domain pacing spreads each busy domain's emails ``domain_min_gap_seconds`` apart, so it
moves most of them. A second, one-step campaign to the first ``SHARED_PER_DOMAIN`` recipients of each
busy domain starts at the same moment, planned for the same instants: for each shared address the two
campaigns' workers race for its first-contact slot, and the loser's first step is deferred at send
time (``deferred_reason`` ``first_contact_limit`` on its task row) and sent later.

``first_contact_deferrals`` reads those decisions from the task rows: how many first steps were
deferred, how many of them went out later (``send_at`` ISO strings of one width compare as times), and
how many are lost: deferred and never sent.
"""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from outreach.task_model import Status
from outreach_operator.campaigns.recipients import Recipient

BUSY_DOMAINS = ("northwind.example", "kontor.example.de")
PER_DOMAIN = 24
SHARED_PER_DOMAIN = 4
# The recipients' own zones, cycled over each busy domain's rows; empty: the country's or the campaign's.
ZONES = ("America/New_York", "Asia/Tokyo", "")
COLUMNS = ("email", "company", "timezone")
# What the worker records on a first step it deferred for the per-address rule (email_worker).
FIRST_CONTACT_LIMIT = "first_contact_limit"


def busy_rows() -> list[dict[str, str]]:
    """The busy domains' recipients, interleaved (each domain's first rows first), with their zones."""
    return [
        {
            "email": f"contact{i:02d}@{domain}",
            "company": domain.split(".", 1)[0].capitalize(),
            "timezone": ZONES[i % len(ZONES)],
        }
        for i in range(PER_DOMAIN)
        for domain in BUSY_DOMAINS
    ]


def shared_rows() -> list[dict[str, str]]:
    """The recipients of both campaigns: the first ``SHARED_PER_DOMAIN`` of each busy domain."""
    return busy_rows()[: SHARED_PER_DOMAIN * len(BUSY_DOMAINS)]


def job_rows(recipients: Iterable[Recipient]) -> list[dict[str, str]]:
    """The scrape job's recipients as rows of the file (their zone left to their domain or the campaign)."""
    return [{"email": r.email, "company": r.values.get("company", ""), "timezone": ""} for r in recipients]


def write_recipients(path: Path, rows: Iterable[Mapping[str, str]]) -> Path:
    """A recipients CSV file (``COLUMNS``) of ``rows``."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows({column: row[column] for column in COLUMNS} for row in rows)
    return path


def second_campaign_file(campaign: Mapping[str, Any], campaign_id: str) -> dict[str, Any]:
    """The second campaign: ``campaign``'s file with its own id and only its first step."""
    return {**campaign, "campaign_id": campaign_id, "steps": list(campaign["steps"])[:1]}


def _deferred_first_step(row: Mapping[str, Any]) -> bool:
    reason = str(row.get("deferred_reason", ""))
    return int(row.get("step", 0)) == 1 and reason.startswith(FIRST_CONTACT_LIMIT)


def _sent_later(row: Mapping[str, Any]) -> bool:
    """Finished with an SES message id, at a send time after the one it was deferred from."""
    return (
        row.get("status") == Status.FINISHED.value
        and bool(row.get("ses_message_id"))
        and str(row.get("send_at", "")) > str(row.get("deferred_from", ""))
    )


def first_contact_deferrals(rows_by_campaign: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, Any]:
    """From the campaigns' email task rows: the first steps deferred at send time for the per-address
    rule (in all and per campaign), how many of them went out later (``_sent_later``), how many of the
    others are still open or ended unsent (by status), and ``lost``: deferred and not sent later."""
    per_campaign: dict[str, int] = {}
    sent = 0
    others: Counter[str] = Counter()
    for campaign_id, rows in rows_by_campaign.items():
        deferred = [row for row in rows if _deferred_first_step(row)]
        per_campaign[campaign_id] = len(deferred)
        sent += sum(1 for row in deferred if _sent_later(row))
        others.update(str(row.get("status")) for row in deferred if not _sent_later(row))
    total = sum(per_campaign.values())
    return {
        "deferred": total,
        "per_campaign": per_campaign,
        "sent_later": sent,
        "not_sent_later": dict(others),
        "lost": total - sent,
    }


def zone_emails(scheduled: Mapping[str, Any]) -> dict[str, int]:
    """Emails per recipient zone, from the schedule report's ``zones.plan`` (per zone, day and hour)."""
    totals: Counter[str] = Counter()
    for entry in scheduled["zones"]["plan"]:
        totals[str(entry["zone"])] += int(entry["emails"])
    return dict(sorted(totals.items()))
