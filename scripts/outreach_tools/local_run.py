"""`make local`: the whole pipeline on loopback, with the applied configuration and the real zips.

1. starts the embedded AWS (moto in-process, push-to-Lambda off) on a virtual clock;
2. applies ``terraform/environments/local`` against it (python-terraform; state in a temp dir);
3. starts the pollers (``LocalCloud``) and the web farm;
4. creates a scrape job of ``--sites`` farm sites and shows tasks per status while it runs;
5. prints a report and exits 0 only if every task is terminal and nothing was lost.

The stack is also importable (``LocalStack``) for the end-to-end scenarios in ``tests/e2e``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from outreach_tools.localaws.base import Journal, client
from outreach_tools.localaws.clock import VirtualClock
from outreach_tools.localaws.cloud import LocalCloud
from outreach_tools.localaws.runtime import FunctionRuntime
from outreach_tools.localaws.server import DEFAULT_PORT, embedded_aws, free_port
from outreach_tools.localaws.webfarm import WebFarm

REPO = Path(__file__).resolve().parents[2]
LOCAL_ROOT = REPO / "terraform" / "environments" / "local"
TERMINAL = ("Finished", "Failed", "Cancelled")
STATUSES = ("Pending", "Running", *TERMINAL)


class StackError(RuntimeError):
    """The local stack could not be brought up."""


def terraform_apply(endpoint: str, workdir: Path, variables: Mapping[str, Any]) -> dict[str, Any]:
    """Apply the local root against ``endpoint``; state and plugins stay in ``workdir``."""
    from python_terraform import Terraform

    overrides = {
        "TF_DATA_DIR": str(workdir / ".terraform"),
        "TF_IN_AUTOMATION": "1",
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
    }
    previous = {k: os.environ.get(k) for k in overrides}
    os.environ.update(overrides)  # python-terraform runs terraform with this process's environment
    try:
        terraform = Terraform(working_dir=str(LOCAL_ROOT))
        init_options: dict[str, Any] = {"input": False, "capture_output": True}
        plugin_dir = os.environ.get("TF_PLUGIN_DIR") or (
            "/opt/tf-plugins" if Path("/opt/tf-plugins").is_dir() else ""
        )
        if plugin_dir:
            init_options["plugin_dir"] = plugin_dir
        code, out, err = terraform.init(**init_options)
        if code != 0:
            raise StackError(f"terraform init failed:\n{out}\n{err}")
        state = str(workdir / "terraform.tfstate")
        code, out, err = terraform.apply(
            skip_plan=True,
            input=False,
            capture_output=True,
            var={"endpoint": endpoint, **variables},
            state=state,
            lock=False,
            parallelism=8,
        )
        if code != 0:
            raise StackError(f"terraform apply failed:\n{out}\n{err}")
        code, out, err = terraform.output_cmd("-json", state=state, capture_output=True)
        if code != 0:
            raise StackError(f"terraform output failed:\n{err}")
    finally:
        for key, value in previous.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return {name: value["value"] for name, value in json.loads(out).items()}


@dataclass
class LocalStack:
    """A running pipeline: emulator endpoint, applied outputs, pollers, web farm."""

    endpoint: str
    region: str
    clock: VirtualClock
    outputs: dict[str, Any]
    runtime: FunctionRuntime
    cloud: LocalCloud
    farm: WebFarm
    journal: Journal
    started: float = field(default_factory=time.monotonic)

    @property
    def pipeline(self) -> dict[str, Any]:
        value: dict[str, Any] = self.outputs["pipeline"]
        return value

    def client(self, service: str) -> Any:
        return client(service, self.endpoint, self.region)

    def handler_environment(self) -> dict[str, str]:
        """Environment under which this process may call the task store against the emulator."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": self.region,
            "AWS_REGION": self.region,
            "TASKS_TABLE": self.pipeline["tasks_table_name"],
            "SCRAPE_QUEUE_URL": self.pipeline["scrape_queue_url"],
            "SCRAPE_DLQ_URL": self.pipeline["scrape_dlq_url"],
            "RESULTS_BUCKET": self.pipeline["results_bucket"],
            "POWERTOOLS_SERVICE_NAME": "local-driver",
            "POWERTOOLS_METRICS_NAMESPACE": "outreach-local",
        }

    @contextlib.contextmanager
    def as_caller(self) -> Iterator[None]:
        """Run task-store calls in this process against the emulator, on the virtual clock."""
        from outreach import clock as outreach_clock

        previous = {k: os.environ.get(k) for k in self.handler_environment()}
        os.environ.update(self.handler_environment())
        _reset_outreach_clients()
        outreach_clock.set_time_source(self.clock.now)
        try:
            yield
        finally:
            outreach_clock.set_time_source(None)
            for key, value in previous.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
            _reset_outreach_clients()

    def create_job(self, job_id: str, urls: list[str]) -> Any:
        from outreach import task_store

        with self.as_caller():
            return task_store.create_scrape_job(job_id, urls)

    def job_counts(self, job_id: str) -> dict[str, int]:
        from outreach import task_store

        with self.as_caller():
            return dict(task_store.job_counts(job_id))

    def tasks(self, job_id: str) -> list[dict[str, Any]]:
        """Every task row of the job, read from the table (the source of truth)."""
        ddb = self.client("dynamodb")
        items: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {
            "TableName": self.pipeline["tasks_table_name"],
            "FilterExpression": "job_id = :j AND kind = :k",
            "ExpressionAttributeValues": {":j": {"S": job_id}, ":k": {"S": "scrape"}},
        }
        while True:
            response = ddb.scan(**kwargs)
            items.extend(response.get("Items", []))
            if "LastEvaluatedKey" not in response:
                break
            kwargs["ExclusiveStartKey"] = response["LastEvaluatedKey"]
        return [{k: next(iter(v.values())) for k, v in item.items()} for item in items]

    def queue_messages(self, url: str) -> list[dict[str, Any]]:
        """Drain-free look at a queue: receive with visibility 0 until every message was seen."""
        sqs = self.client("sqs")
        seen: dict[str, dict[str, Any]] = {}
        for _ in range(50):
            response = sqs.receive_message(
                QueueUrl=url,
                MaxNumberOfMessages=10,
                VisibilityTimeout=0,
                MessageAttributeNames=["All"],
                AttributeNames=["All"],
            )
            new = [m for m in response.get("Messages", []) if m["MessageId"] not in seen]
            if not new:
                break
            seen.update({m["MessageId"]: m for m in new})
        return list(seen.values())

    def reconciler_actions(self) -> dict[str, int]:
        """What the scrape reconciler's runs did so far, summed from what each run returned."""
        name = str(self.pipeline["scrape_reconciler_function_name"])
        totals: dict[str, int] = {"runs": 0}
        for entry in self.journal.entries("async.succeeded"):
            if entry["function"].rsplit(":", 1)[-1] != name or not isinstance(entry["payload"], dict):
                continue
            totals["runs"] += 1
            for action, count in entry["payload"].get("actions", {}).items():
                totals[action] = totals.get(action, 0) + int(count)
        return totals

    def objects(self, bucket: str | None, prefix: str = "") -> list[str]:
        if not bucket:
            return []
        s3 = self.client("s3")
        keys: list[str] = []
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            keys.extend(o["Key"] for o in page.get("Contents", []))
        return keys


def _reset_outreach_clients() -> None:
    """Drop clients the handlers' modules cached, so they pick up the endpoint and region."""
    from outreach import clients

    clients.reset()


@contextlib.contextmanager
def local_stack(
    *,
    sites: int,
    port: int | None = DEFAULT_PORT,
    scale: float = 10.0,
    region: str = "eu-central-1",
    dispatch_mode: str = "lambda",
    scraper_concurrency: int = 140,
    local_workers: int = 16,
    package_dir: Path | None = None,
    extra_variables: Mapping[str, Any] | None = None,
    farm_options: Mapping[str, Any] | None = None,
    extra_env: Mapping[str, str] | None = None,
) -> Iterator[LocalStack]:
    """Bring the whole pipeline up on loopback; tear every process down on exit."""
    clock = VirtualClock(scale)
    workdir = Path(tempfile.mkdtemp(prefix="outreach-local-"))
    journal = Journal()
    try:
        with embedded_aws(port if port is not None else free_port(), clock=clock) as endpoint:
            variables: dict[str, Any] = {
                "region": region,
                "dispatch_mode": dispatch_mode,
                "scraper_concurrency": scraper_concurrency,
            }
            if package_dir is not None:
                variables["package_dir"] = str(package_dir)
            variables.update(extra_variables or {})
            outputs = terraform_apply(endpoint, workdir, variables)
            runtime = FunctionRuntime(
                endpoint,
                clock,
                cache_dir=workdir / "functions",
                region=region,
                max_workers_per_function=local_workers,
                extra_env=extra_env,
            )
            farm = WebFarm(sites, **dict(farm_options or {})).start()
            cloud = LocalCloud(endpoint, clock, runtime, region=region, journal=journal)
            try:
                cloud.start()
                yield LocalStack(endpoint, region, clock, outputs, runtime, cloud, farm, journal)
            finally:
                # Close the runtime first: in-flight invocations end at once and no new ones start,
                # so the pollers stop without waiting out function timeouts.
                runtime.close()
                cloud.stop()
                farm.stop()
    finally:
        clock.close()
        shutil.rmtree(workdir, ignore_errors=True)


# --- the report ---------------------------------------------------------------------------------
def _bar(counts: Mapping[str, int], total: int, width: int = 40) -> str:
    done = sum(counts.get(s, 0) for s in TERMINAL)
    filled = int(width * done / total) if total else width
    parts = " ".join(f"{s}={counts.get(s, 0)}" for s in STATUSES)
    return f"[{'#' * filled}{'.' * (width - filled)}] {done}/{total}  {parts}"


def wait_until_terminal(
    stack: LocalStack,
    job_id: str,
    total: int,
    *,
    timeout_real: float,
    show: bool = True,
    idle_skip_seconds: float = 120.0,
) -> dict[str, int]:
    """Poll the job counters until every task is terminal.

    When no invocation is in flight and the counters did not move, nothing can happen before some
    virtual deadline (a visibility timeout, a backoff, a lease): the clock then jumps
    ``idle_skip_seconds`` per second of waiting, so idle virtual minutes cost no wall time.
    """
    deadline = time.monotonic() + timeout_real
    counts: dict[str, int] = {}
    previous: dict[str, int] | None = None
    while time.monotonic() < deadline:
        counts = stack.job_counts(job_id)
        if show:
            sys.stderr.write("\r" + _bar(counts, total))
            sys.stderr.flush()
        if sum(counts.get(s, 0) for s in TERMINAL) >= total:
            break
        busy = any(s.in_flight for s in stack.runtime.stats.values())
        if idle_skip_seconds and counts == previous and not busy:
            stack.clock.advance(idle_skip_seconds)
        previous = counts
        time.sleep(1.0)
    if show:
        sys.stderr.write("\n")
    return counts


def alarms_that_would_fire(stack: LocalStack, dlq_messages: int) -> list[str]:
    """Evaluate the applied alarms against what the run observed (the emulator has no metrics)."""
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


def build_report(stack: LocalStack, job_id: str, total: int, started: float) -> dict[str, Any]:
    tasks = stack.tasks(job_id)
    counts = stack.job_counts(job_id)
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
    functions = stack.cloud.summary()["functions"]
    sources = stack.cloud.summary()["sources"]
    return {
        "job_id": job_id,
        "tasks": total,
        "rows": len(tasks),
        "by_status": by_status,
        "counters": counts,
        "counters_match_rows": all(counts.get(s, 0) == by_status.get(s, 0) for s in STATUSES),
        "retried_tasks": retried,
        "dlq_messages": len(dlq),
        "dlq_reasons": reasons,
        "stream_failure_records": len(failure_records),
        "reconciler": stack.reconciler_actions(),
        "alarms_firing": alarms_that_would_fire(stack, len(dlq)),
        "lost": missing + len(non_terminal) + len(finished_without_result),
        "non_terminal": non_terminal[:20],
        "duration_seconds": round(duration, 1),
        "virtual_seconds": round(duration * stack.clock.scale, 1),
        "throughput_tasks_per_minute": round(len(tasks) / duration * 60, 1) if duration else 0.0,
        "max_in_flight": {name: stats["max_in_flight"] for name, stats in functions.items()},
        "invocations": {name: stats["invocations"] for name, stats in functions.items()},
        "sources": sources,
        "web_farm_requests": sum(stack.farm.hits.values()),
    }


def print_report(report: Mapping[str, Any]) -> None:
    lines = [
        "",
        f"job {report['job_id']}: {report['tasks']} tasks in {report['duration_seconds']} s "
        f"({report['virtual_seconds']} s virtual), {report['throughput_tasks_per_minute']} tasks/min",
        f"  by status      {report['by_status']}   (counters agree: {report['counters_match_rows']})",
        f"  retried tasks  {report['retried_tasks']}",
        f"  scrape DLQ     {report['dlq_messages']} {report['dlq_reasons']}",
        f"  stream S3 failure records  {report['stream_failure_records']}",
        f"  reconciler     {report['reconciler']}",
        f"  alarms that would fire     {report['alarms_firing'] or 'none'}",
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
        with local_stack(
            sites=args.sites,
            port=args.port,
            scale=args.scale,
            dispatch_mode=args.dispatch_mode,
            local_workers=args.workers,
            farm_options={"persistent_hangs": args.persistent_hangs},
        ) as stack:
            print(
                f"applied in {time.monotonic() - started:.0f} s; web farm on 127.0.0.1:{stack.farm.port} "
                f"with {args.sites} sites",
                flush=True,
            )
            job_id = f"local-{int(time.time())}"
            job_started = time.monotonic()
            creation = stack.create_job(job_id, stack.farm.urls())
            total = len(creation.created) + len(creation.existing)
            wait_until_terminal(stack, job_id, total, timeout_real=args.timeout)
            # Let the last deletes and counters settle before reading the end state.
            time.sleep(1.0)
            report = build_report(stack, job_id, total, job_started)
            print_report(report)
            if args.report_json:
                args.report_json.write_text(json.dumps(report, indent=2, default=str))
    except StackError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    return 0 if report["lost"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
