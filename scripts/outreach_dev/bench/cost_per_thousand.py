"""Figures for calls per task and cost per 1,000 tasks, from one measured job (:mod:`calls_per_task`).

GB-seconds are the handlers' measured in-process wall time times the memory Terraform gives each
function (``modules/outreach-pipeline`` defaults); Lambda bills duration rounded up to the
millisecond, which at these durations changes nothing visible. Stream reads by Lambda's event source
mapping are free; the SQS event source mapping's receive and delete of each scrape message are billed
requests and are counted (one receive per delivery, one delete per handled message).
https://aws.amazon.com/dynamodb/pricing/ (DynamoDB Streams: GetRecords by Lambda triggers is free)
"""

from __future__ import annotations

from outreach_dev.bench.calls_per_task import STREAM_BATCH_SIZE, JobCalls, Phase
from outreach_dev.bench.cost_model import PriceTable, Usage, cost_per_thousand, dominant, fixed_daily_usd
from outreach_dev.bench.report import Figure, Section

SCRAPER_MEMORY_GB = 1536 / 1024
DISPATCHER_MEMORY_GB = 256 / 1024
RECONCILER_MEMORY_GB = 256 / 1024
RECONCILER_RUNS_PER_DAY = 24 * 60 // 5
DISPATCH_TARGET = 0.1
SCRAPE_WRITE_TARGET = 4


def _per_task(phase: Phase, key: str) -> float:
    return phase.calls.get(key, 0) / phase.tasks


def calls_section(job: JobCalls) -> Section:
    section = Section("calls per task", details=job.as_dict())
    ours, baseline = job.phases["dispatch (ours)"], job.phases["dispatch (baseline)"]
    dispatch_sqs = ours.service_per_task("sqs")
    section.add(
        Figure(
            "dispatch: SQS calls per task",
            dispatch_sqs,
            "calls",
            baseline=baseline.service_per_task("sqs"),
            target=f"<= {DISPATCH_TARGET}",
            met=dispatch_sqs <= DISPATCH_TARGET,
        )
    )
    creation = job.phases["job creation"]
    section.add(
        Figure("job creation: DynamoDB calls per task", creation.service_per_task("dynamodb"), "calls")
    )
    section.add(
        Figure(
            "job creation: DynamoDB items written per task", creation.items_written / creation.tasks, "items"
        )
    )
    happy = job.phases["scrape happy path"]
    writes = happy.items_written / happy.tasks
    section.add(
        Figure(
            "scrape happy path: DynamoDB items written per task",
            writes,
            "items",
            target=f"<= {SCRAPE_WRITE_TARGET}",
            met=writes <= SCRAPE_WRITE_TARGET,
        )
    )
    for name in ("scrape happy path", "scrape retry path", "reconciler run"):
        phase = job.phases[name]
        for service in ("dynamodb", "sqs", "s3"):
            value = phase.service_per_task(service)
            if value:
                section.add(Figure(f"{name}: {service} calls per task", value, "calls"))
    section.add(Figure("stream records per task (whole job)", job.stream_records_per_task, "records"))
    return section


def _usage(job: JobCalls, dispatch: Phase) -> Usage:
    happy = job.phases["scrape happy path"]
    creation = job.phases["job creation"]
    reconcile = job.phases["reconciler run"]
    phases = (creation, dispatch, happy, reconcile)
    # Every stream record of the job reaches the dispatcher, STREAM_BATCH_SIZE at a time.
    dispatcher_invocations = job.stream_records_per_task / STREAM_BATCH_SIZE
    dispatcher_seconds = job.stream_records_per_task * sum(dispatch.handler_seconds) / dispatch.tasks
    scraper_seconds = sum(happy.handler_seconds) / happy.tasks
    return Usage(
        lambda_invocations=dispatcher_invocations + happy.invocations / happy.tasks,
        gb_seconds=dispatcher_seconds * DISPATCHER_MEMORY_GB + scraper_seconds * SCRAPER_MEMORY_GB,
        sqs_requests=sum(p.service_per_task("sqs") for p in phases),
        dynamodb_write_units=sum(p.write_units / p.tasks for p in phases),
        dynamodb_read_units=sum(p.read_units / p.tasks for p in phases),
        s3_put_requests=sum(_per_task(p, "s3:PutObject") for p in phases),
        s3_get_requests=sum(_per_task(p, "s3:GetObject") for p in phases),
    )


def cost_section(job: JobCalls, prices: PriceTable) -> Section:
    ours = cost_per_thousand(_usage(job, job.phases["dispatch (ours)"]), prices)
    baseline = cost_per_thousand(_usage(job, job.phases["dispatch (baseline)"]), prices)
    name, share = dominant(ours)
    reconcile = job.phases["reconciler run"]
    section = Section(
        "cost per 1,000 tasks",
        details={
            "region": prices.region,
            "prices_recorded": prices.recorded,
            "ours_usd": ours,
            "baseline_dispatcher_usd": baseline,
            "dominant": {"service": name, "share": share},
        },
    )
    section.add(Figure("total, happy path (USD)", ours["total"], "USD", baseline=baseline["total"]))
    for service in ("lambda_duration", "lambda_requests", "dynamodb", "sqs", "s3"):
        section.add(Figure(f"{service} (USD)", ours[service], "USD", baseline=baseline[service]))
    section.add(Figure(f"dominant share: {name}", share, "share of total"))
    # No stage sends e-mail yet; the price table's SES price shows what one e-mail per task would add.
    section.add(Figure("one SES e-mail per task would add (USD)", 1000 * prices.unit_usd["ses_email"], "USD"))
    section.add(
        Figure(
            "scheduled reconciler, fixed (USD per day)",
            fixed_daily_usd(
                prices,
                runs_per_day=RECONCILER_RUNS_PER_DAY,
                gb_seconds_per_run=sum(reconcile.handler_seconds) * RECONCILER_MEMORY_GB,
            )
            + RECONCILER_RUNS_PER_DAY * reconcile.read_units * prices.unit_usd["dynamodb_read_request_unit"],
            "USD/day",
        )
    )
    return section
