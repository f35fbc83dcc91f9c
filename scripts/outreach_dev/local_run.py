"""`make local`: one scrape job through the whole pipeline on the embedded AWS, and its report.

1. starts the pipeline on loopback (``embedded_aws.pipeline.local_pipeline``: moto in-process on a
   virtual clock, ``terraform/environments/local`` applied to it, pollers, web farm);
2. creates a job of ``--sites`` farm sites with ``outreach job create`` and follows it with the same
   progress display ``outreach job status --watch`` shows an operator;
3. ends with ``outreach job status --json``, checks its numbers against the table, prints a report;
4. sends a two-step campaign to the addresses the job found (``local_campaign``), with replies
   received at ``LOCAL_REPLY_DOMAIN`` (``local_replies``), and reports it; exits 0 only if every task
   is terminal, nothing was lost and each sent email task gave one email.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import os
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.console import Console

from embedded_aws.pipeline import (
    LOCAL_REPLY_DOMAIN,
    STATUSES,
    TERMINAL,
    FollowTimeoutError,
    LocalPipeline,
    local_pipeline,
)
from embedded_aws.server import DEFAULT_PORT
from outreach_dev.local_campaign import report_lines as campaign_report_lines
from outreach_dev.local_campaign import run_campaign
from outreach_dev.terraform_cli import TerraformError
from outreach_operator.cli.app import main as outreach
from outreach_operator.cli.job_view import live_progress, show_progress


def outreach_command(pipeline: LocalPipeline, *args: str) -> tuple[int, str]:
    """Run the ``outreach`` command in this process against the pipeline; its exit code and stdout."""
    targets = [
        "--table", pipeline.pipeline["tasks_table_name"],
        "--queue-url", pipeline.pipeline["scrape_queue_url"],
        "--dlq-url", pipeline.pipeline["scrape_dlq_url"],
        "--results-bucket", pipeline.pipeline["results_bucket"],
        "--endpoint-url", pipeline.endpoint,
        "--region", pipeline.region,
    ]  # fmt: skip
    if pipeline.pipeline.get("dispatch_failure_bucket"):
        targets += ["--failure-bucket", pipeline.pipeline["dispatch_failure_bucket"]]
    out = io.StringIO()
    with pipeline.as_caller(), contextlib.redirect_stdout(out):
        code = outreach([*targets, *args])
    return code, out.getvalue()


def create_job(pipeline: LocalPipeline, job_id: str, urls: list[str]) -> dict[str, Any]:
    """``outreach job create`` from a sites file; returns its JSON report."""
    with tempfile.TemporaryDirectory() as directory:
        sites = Path(directory) / "sites.txt"
        sites.write_text("\n".join(urls) + "\n", encoding="utf-8")
        code, out = outreach_command(
            pipeline,
            "--json",
            "job",
            "create",
            "--file",
            str(sites),
            "--job-id",
            job_id,
            "--operator",
            "make-local",
        )
    if code != 0:
        raise RuntimeError(f"outreach job create exited {code}: {out}")
    report: dict[str, Any] = json.loads(out)
    return report


def follow(pipeline: LocalPipeline, job_id: str, *, timeout: float, show: bool) -> None:
    """Wait for the job with the operator's progress display (to stderr)."""
    if not show:
        pipeline.wait_terminal(job_id, timeout=timeout, interval=1.0)
        return
    with live_progress(Console(stderr=True)) as live:
        pipeline.wait_terminal(
            job_id, timeout=timeout, interval=1.0, on_update=lambda p: show_progress(live, p)
        )


def job_status(pipeline: LocalPipeline, job_id: str) -> dict[str, Any]:
    """``outreach job status --json``: what an operator's script would read."""
    code, out = outreach_command(pipeline, "--json", "job", "status", job_id)
    if code not in (0, 1):
        raise RuntimeError(f"outreach job status exited {code}: {out}")
    status: dict[str, Any] = json.loads(out)
    return status


def alarms_that_would_fire(stack: LocalPipeline, dlq_messages: int) -> list[str]:
    """Evaluate the applied alarms on queues and functions against what the run observed (moto
    publishes no metrics of its services; the alarms on published metrics, such as SES reputation,
    are evaluated by the emulator itself: ``alarm_state_changes`` in the report)."""
    cloudwatch = stack.client("cloudwatch")
    firing = []
    summary = stack.cloud.summary()
    for alarm in cloudwatch.describe_alarms().get("MetricAlarms", []):
        dims = {d["Name"]: d["Value"] for d in alarm.get("Dimensions", [])}
        metric = alarm.get("MetricName")
        observed: float | None = None
        if metric == "ApproximateNumberOfMessagesVisible" and "QueueName" in dims:
            observed = float(dlq_messages) if "dlq" in dims["QueueName"].lower() else 0.0
        elif metric in ("Errors", "Throttles") and "FunctionName" in dims:
            stats = summary["functions"].get(dims["FunctionName"], {})
            observed = float(stats.get("errors", 0)) if metric == "Errors" else 0.0
        if observed is not None and observed >= float(alarm.get("Threshold", 0)) and observed > 0:
            firing.append(f"{alarm['AlarmName']} ({metric}={observed:g})")
    return firing


def build_report(
    stack: LocalPipeline, job_id: str, total: int, started: float, status: Mapping[str, Any]
) -> dict[str, Any]:
    tasks = stack.tasks(job_id)
    counts = dict(status["counts"])
    by_status: dict[str, int] = {}
    for task in tasks:
        by_status[task["status"]] = by_status.get(task["status"], 0) + 1
    retried = sum(1 for t in tasks if int(t.get("attempts", 0)) > 1)
    dlq = stack.queue_messages(stack.pipeline["scrape_dlq_url"])
    reasons: dict[str, int] = {}
    for message in dlq:
        reason = message.get("MessageAttributes", {}).get("reason", {}).get("StringValue", "unknown")
        reasons[reason] = reasons.get(reason, 0) + 1
    failure_records = stack.objects(stack.pipeline.get("dispatch_failure_bucket"))
    non_terminal = [t["task_id"] for t in tasks if t["status"] not in TERMINAL]
    missing = total - len(tasks)
    finished_without_result = [
        t["task_id"] for t in tasks if t["status"] == "Finished" and not t.get("result_key")
    ]
    duration = time.monotonic() - started
    summary = stack.cloud.summary()
    functions = summary["functions"]
    return {
        "job_id": job_id,
        "tasks": total,
        "rows": len(tasks),
        "by_status": by_status,
        "status_command": {"counts": counts, "done": status["done"], "failures": status["failures"]},
        "status_matches_rows": all(counts.get(s, 0) == by_status.get(s, 0) for s in STATUSES)
        and status["total"] == len(tasks),
        "retried_tasks": retried,
        "dlq_messages": len(dlq),
        "dlq_reasons": reasons,
        "stream_failure_records": len(failure_records),
        "reconciler": stack.reconciler_actions(),
        "alarms_firing": alarms_that_would_fire(stack, len(dlq)),
        "alarm_state_changes": [
            f"{c.alarm_name}: {c.old_state} -> {c.new_state}" for c in stack.alarm_history()
        ],
        "lost": missing + len(non_terminal) + len(finished_without_result),
        "non_terminal": non_terminal[:20],
        "duration_seconds": round(duration, 1),
        "virtual_seconds": round(duration * stack.clock.scale, 1),
        "throughput_tasks_per_minute": round(len(tasks) / duration * 60, 1) if duration else 0.0,
        "max_in_flight": {name: stats["max_in_flight"] for name, stats in functions.items()},
        "invocations": {name: stats["invocations"] for name, stats in functions.items()},
        # What made a function's Errors alarm fire: errors, of which timeouts and crashes.
        "function_errors": {
            name: {k: stats[k] for k in ("errors", "timeouts", "crashes")}
            for name, stats in functions.items()
            if stats["errors"]
        },
        "sources": summary["sources"],
        "web_farm_requests": sum(stack.farm.hits.values()),
    }


def print_report(report: Mapping[str, Any]) -> None:
    failures = ", ".join(f"{g['reason']}={g['count']}" for g in report["status_command"]["failures"])
    lines = [
        "",
        f"job {report['job_id']}: {report['tasks']} tasks in {report['duration_seconds']} s "
        f"({report['virtual_seconds']} s virtual), {report['throughput_tasks_per_minute']} tasks/min",
        f"  by status      {report['by_status']}",
        f"  outreach job status --json agrees with the table: {report['status_matches_rows']}",
        f"  failures by reason  {failures or 'none'}",
        f"  retried tasks  {report['retried_tasks']}",
        f"  scrape DLQ     {report['dlq_messages']} {report['dlq_reasons']}",
        f"  stream S3 failure records  {report['stream_failure_records']}",
        f"  reconciler     {report['reconciler']}",
        f"  alarms that would fire     {report['alarms_firing'] or 'none'}",
        f"  alarm state changes        {report['alarm_state_changes'] or 'none'}",
        f"  function errors            {report['function_errors'] or 'none'}",
        f"  invocations    {report['invocations']}",
        f"  max in flight  {report['max_in_flight']}",
        f"  web farm requests {report['web_farm_requests']}",
        f"  lost           {report['lost']} {report['non_terminal'] or ''}",
    ]
    print("\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sites", type=int, default=int(os.environ.get("SITES", "300")))
    parser.add_argument("--port", type=int, default=int(os.environ.get("LOCAL_AWS_PORT", DEFAULT_PORT)))
    parser.add_argument("--scale", type=float, default=float(os.environ.get("CLOCK_SCALE", "10")))
    parser.add_argument("--dispatch-mode", default=os.environ.get("DISPATCH_MODE", "lambda"))
    parser.add_argument("--workers", type=int, default=int(os.environ.get("LOCAL_WORKERS", "16")))
    parser.add_argument("--timeout", type=float, default=float(os.environ.get("LOCAL_TIMEOUT", "3600")))
    parser.add_argument("--report-json", type=Path, default=None)
    parser.add_argument(
        "--persistent-hangs",
        action="store_true",
        help="hanging sites never answer (their tasks need a reconciler to become terminal)",
    )
    args = parser.parse_args(argv)
    # The driver's own clients share small connection pools across threads; their warnings are noise.
    logging.getLogger("urllib3.connectionpool").setLevel(logging.ERROR)

    started = time.monotonic()
    print(
        f"starting the embedded AWS on 127.0.0.1:{args.port} (clock x{args.scale:g}) and applying "
        f"terraform/environments/local ...",
        flush=True,
    )
    try:
        with local_pipeline(
            sites=args.sites,
            port=args.port,
            scale=args.scale,
            dispatch_mode=args.dispatch_mode,
            local_workers=args.workers,
            farm_options={"persistent_hangs": args.persistent_hangs},
            reply_domain=LOCAL_REPLY_DOMAIN,
        ) as stack:
            print(
                f"applied in {time.monotonic() - started:.0f} s; web farm on 127.0.0.1:{stack.farm.port} "
                f"with {args.sites} sites",
                flush=True,
            )
            job_id = f"local-{int(time.time())}"
            job_started = time.monotonic()
            created = create_job(stack, job_id, stack.farm.urls())
            print(f"outreach job create: {created['created']} created in job {job_id}", flush=True)
            try:
                follow(stack, job_id, timeout=args.timeout, show=sys.stderr.isatty())
            except FollowTimeoutError as exc:
                print(str(exc), file=sys.stderr)
            # Let the last deletes settle before reading the end state.
            time.sleep(1.0)
            status = job_status(stack, job_id)
            report = build_report(stack, job_id, len(stack.farm.urls()), job_started, status)
            print_report(report)
            report["campaign"] = run_campaign(stack, outreach_command, job_id, timeout=args.timeout)
            print("\n".join(campaign_report_lines(report["campaign"])))
            if args.report_json:
                args.report_json.write_text(json.dumps(report, indent=2, default=str))
    except TerraformError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    campaign = report["campaign"]
    campaign_ok = campaign["still_open"] == 0 and campaign["one_email_per_sent_task"]
    return 0 if report["lost"] == 0 and report["status_matches_rows"] and campaign_ok else 1


if __name__ == "__main__":
    sys.exit(main())
