"""The operator's look-ups: ``job status`` of a finished job with failures, ``contacts show`` of one address.

A scrape job of ``sites`` sites is created with ``outreach job create`` on moto in-process, and every
task is then moved as the scraper moves it (``task_store.claim``, then ``finish`` or ``fail`` with a
reason of the scraper's own kinds): a realistic mix of Finished and Failed tasks, the failures spread
over several reasons, so ``job status`` has failure groups to show. The contact ledger holds
``LEDGER_PER_SITE`` records per site (the addresses ever contacted, a few of them stopped), and
``contacts show`` looks one stopped address up with the tasks table given (so its open emails are
read too). Each command runs through the command line as an operator runs it (click's runner,
``--json``), repeated ``REPEATS`` times, the median reported with the spread; every AWS call is counted
(``call_counter``). The times are moto's Python on the machine (the embedded AWS), not AWS's.
"""

from __future__ import annotations

import json
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import boto3
from click.testing import CliRunner

from outreach import clock, contacts, task_store
from outreach.task_model import Status
from outreach_dev.bench import call_counter
from outreach_dev.bench.report import Figure, MeasurementError, Section
from outreach_dev.bench.sandbox import REGION, sandbox
from outreach_dev.contacts_table_shape import create_contacts_table
from outreach_operator import task_queries
from outreach_operator.cli.app import cli

JOB_ID = "bench-lookups"
# The targets of issue 45 ("The operator's commands"), in seconds.
JOB_STATUS_TARGET = 2.0
CONTACT_TARGET = 1.0
REPEATS = 3
# Contact-ledger records per scraped site: the addresses found and contacted over the ledger's life.
LEDGER_PER_SITE = 4
# One in this many ledger records is a stop (an unsubscribe or a bounce).
STOP_EVERY = 20
# What fails a site, as the scraper words it (``reason: detail``), and one in how many sites it fails:
# about a fifth of the sites fail, over six reasons.
FAILURES = (
    (11, "dns_not_found", "no address for the host"),
    (29, "timeout", "read timed out after 20 s"),
    (37, "tls_certificate", "certificate has expired"),
    (53, "robots_disallowed", "robots.txt disallows /"),
    (71, "too_many_redirects", "more than 5 redirects"),
    (97, "abandoned", "attempts used up"),
)


def _failure(index: int) -> str | None:
    for every, reason, detail in FAILURES:
        if index % every == 0:
            return f"{reason}: {detail}"
    return None


def _run_job(sites: int) -> tuple[dict[str, int], dict[str, str]]:
    """Every Pending task of the job claimed and finished or failed, as the scraper does; the failures
    per reason group, and the first task to fail for each."""
    pending = sorted(task_queries.job_tasks_with_status(JOB_ID, Status.PENDING), key=lambda t: t.task_id)
    if len(pending) != sites:
        raise MeasurementError(f"job create wrote {len(pending)} of {sites} tasks")
    failed: dict[str, int] = {}
    firsts: dict[str, str] = {}
    for index, task in enumerate(pending, start=1):
        claimed = task_store.claim(task, message_id=f"m-{index}", receive_count=1, lease_seconds=900)
        reason = _failure(index)
        if reason is None:
            task_store.finish(claimed, result_key=f"results/{JOB_ID}/{index}.json", summary={"pages": 3})
        else:
            task_store.fail(claimed, reason=reason)
            group = reason.split(":", 1)[0]
            failed[group] = failed.get(group, 0) + 1
            firsts.setdefault(group, task.task_id)
    return failed, firsts


def _fill_ledger(table: str, records: int) -> str:
    """``records`` address records (each contacted once, one in ``STOP_EVERY`` stopped); the address
    of one stopped record, the one looked up."""
    at = datetime.fromtimestamp(clock.now(), UTC)
    moment = at.strftime("%Y-%m-%dT%H:%M:%SZ")
    dynamodb = boto3.client("dynamodb", region_name=REGION)
    batch: list[Any] = []
    looked_up = ""
    for i in range(records):
        address = f"person-{i}@company-{i % 5_000}.example"
        if i % STOP_EVERY == 0:
            contacts.record_stop(
                contacts.address_key(address),
                contacts.State.UNSUBSCRIBED if i % 2 else contacts.State.BOUNCED,
                at=at,
                why="one-click unsubscribe" if i % 2 else "hard bounce",
                source=contacts.Source.UNSUBSCRIBE if i % 2 else contacts.Source.SES,
                campaign_id="spring-outreach-2027",
            )
            looked_up = address
            continue
        item = {
            "contact_key": contacts.address_key(address),
            "kind": "address",
            "state": "ok",
            "state_rank": 0,
            "last_contacted_at": moment,
            "last_campaign_id": "spring-outreach-2027",
            "updated_at": moment,
        }
        batch.append({"PutRequest": {"Item": task_store.to_avs(item)}})
        if len(batch) == 25:
            dynamodb.batch_write_item(RequestItems={table: batch})
            batch = []
    if batch:
        dynamodb.batch_write_item(RequestItems={table: batch})
    return looked_up


def _timed(flags: list[str], *args: str) -> tuple[list[float], Any, call_counter.CallCount]:
    """One command through the command line ``REPEATS`` times: its wall times, its (last) JSON report
    and its (last run's) AWS calls."""
    times: list[float] = []
    for _ in range(REPEATS):
        with call_counter.call_count() as count, count.counting():
            began = time.perf_counter()
            result = CliRunner().invoke(cli, [*flags, "--json", *args], env={"OUTREACH_OPERATOR": "bench"})
            times.append(time.perf_counter() - began)
        if result.exit_code != 0:
            raise MeasurementError(f"{' '.join(args[:2])} exited {result.exit_code}: {result.output[-400:]}")
    return times, json.loads(result.stdout), count


def run(sites: int) -> Section:
    """``job status`` of a ``sites``-site job with failures and ``contacts show`` of one address in a
    ledger of ``LEDGER_PER_SITE * sites`` records, timed and counted."""
    records = LEDGER_PER_SITE * sites
    section = Section("operator look-ups", details={"sites": sites, "ledger_records": records})
    with sandbox("bench-lookups") as box, TemporaryDirectory() as scratch:
        ledger = create_contacts_table("bench-lookups-contacts", REGION)
        flags = ["--table", box.table, "--region", REGION, "--contacts-table", ledger]
        sites_file = Path(scratch) / "sites.csv"
        sites_file.write_text(
            "url\n" + "".join(f"https://site-{i}.example/\n" for i in range(sites)), encoding="utf-8"
        )
        began = time.perf_counter()
        _timed_once(flags, "job", "create", "--file", str(sites_file), "--job-id", JOB_ID)
        failed, firsts = _run_job(sites)
        address = _fill_ledger(ledger, records)
        setup_s = time.perf_counter() - began
        status_times, status, status_calls = _timed(flags, "job", "status", JOB_ID)
        groups = {group["reason"]: group["count"] for group in status["failures"]}
        if groups != failed or status["counts"].get(Status.FINISHED.value) != sites - sum(failed.values()):
            raise MeasurementError(f"job status says {status['counts']}, {groups}; expected {failed}")
        examples = {group["reason"]: group["example_task"] for group in status["failures"]}
        if examples != firsts:
            raise MeasurementError(f"job status's examples {examples} are not the first failed, {firsts}")
        contact_times, shown, contact_calls = _timed(flags, "contacts", "show", address)
        if not shown.get("stopped"):
            raise MeasurementError(f"contacts show of a stopped address says {shown}")
    status_s, contact_s = statistics.median(status_times), statistics.median(contact_times)
    section.details.update(
        {
            "setup_seconds": setup_s,
            "failed_tasks": sum(failed.values()),
            "failure_groups": failed,
            "job_status_seconds": status_times,
            "contacts_show_seconds": contact_times,
            "calls": {
                "job status": dict(sorted(status_calls.calls.items())),
                "contacts show": dict(sorted(contact_calls.calls.items())),
            },
        }
    )
    section.add(
        Figure(
            f"job status, {sites:,} sites, {sum(failed.values()):,} failed (median of {REPEATS})",
            status_s,
            "s",
            target=f"<= {JOB_STATUS_TARGET:.0f} s",
            met=status_s <= JOB_STATUS_TARGET,
        )
    )
    status_scans = status_calls.calls["dynamodb:Scan"]
    # The failure groups come from the job's counter shards and their examples read by key: a Scan
    # would grow with the whole table, not with the job (docs/performance.md).
    section.add(
        Figure(
            "job status: Scan calls (the failure groups)",
            status_scans,
            "calls",
            target="0",
            met=status_scans == 0,
        )
    )
    section.add(
        Figure(
            f"contacts show of one address, ledger of {records:,} (median of {REPEATS})",
            contact_s,
            "s",
            target=f"<= {CONTACT_TARGET:.0f} s",
            met=contact_s <= CONTACT_TARGET,
        )
    )
    contact_scans = contact_calls.calls["dynamodb:Scan"]
    section.add(
        Figure("contacts show: Scan calls", contact_scans, "calls", target="0", met=contact_scans == 0)
    )
    return section


def _timed_once(flags: list[str], *args: str) -> None:
    result = CliRunner().invoke(cli, [*flags, "--json", *args], env={"OUTREACH_OPERATOR": "bench"})
    if result.exit_code != 0:
        raise MeasurementError(f"{' '.join(args[:2])} exited {result.exit_code}: {result.output[-400:]}")
