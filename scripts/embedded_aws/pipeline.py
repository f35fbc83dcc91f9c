"""The whole pipeline running on the embedded AWS: applied configuration, pollers, web farm, clock.

``local_pipeline()`` starts moto in-process on a virtual clock, applies ``terraform/environments/local``
to it (a throwaway copy, through ``terraform_cli``), starts the pollers (``LocalCloud``) and the web
farm, and tears every process down on exit. ``make local`` and the end-to-end scenarios in
``tests/e2e`` both run on it, and both wait for a job with ``LocalPipeline.wait_terminal``.

With ``reply_domain`` the root receives replies (modules/email-inbound: its ``inbound_reply_domain``
and ``inbound_unmatched_forward_to``). ``LocalPipeline.receive_mail`` then plays the sender's mail
system: SES receives the message and runs the active receipt rule set (``ses_receiving``: the S3
action, its SNS notification, which moto delivers to the inbound queue, whose mapping the pollers
run), and ``LocalPipeline.forwards`` reads back what the inbound processor forwarded.

The stack's CloudWatch alarms are evaluated by the cloud's alarm loop (``alarm_runner``, with the
SES reputation metrics it publishes); ``LocalPipeline.alarm_state``, ``alarm_history`` and
``evaluate_alarms`` read and run it from a scenario.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from embedded_aws.alarm_actions import AlarmStateChange, alarm_state_changes
from embedded_aws.base import Journal, client
from embedded_aws.clock import VirtualClock
from embedded_aws.cloud import LocalCloud
from embedded_aws.runtime import FunctionRuntime
from embedded_aws.server import DEFAULT_PORT, embedded_aws, free_port
from embedded_aws.ses_receiving import ReceivedEmail, receive_email
from embedded_aws.ses_reputation_metrics import ReputationSettings
from embedded_aws.ses_v2 import SentEmail, sent_emails
from embedded_aws.webfarm import WebFarm
from outreach.task_model import Kind, Status
from outreach_dev import terraform_cli
from outreach_dev.env_vars import overridden
from outreach_operator.cli.follow import JobProgress, follow_job
from outreach_operator.errors import FollowTimeoutError

LOCAL_ROOT = terraform_cli.ENVIRONMENTS_DIR / "local"
# Resources the local root's apply creates at once. The aws provider's own waits hold a slot each
# after the emulator has answered (55 s per bucket lifecycle configuration, 25 s per queue and queue
# policy): at 8 they held the slots the Lambda functions waited for (docs/ci.md, "The e2e stack's start").
APPLY_PARALLELISM = 32
TERMINAL = tuple(status.value for status in Status.terminal())
STATUSES = tuple(status.value for status in Status)
# The reply domain and unmatched mailbox ``make local`` and the e2e scenarios apply (a .test domain:
# nothing here is ever delivered anywhere).
LOCAL_REPLY_DOMAIN = "reply.outreach.test"
LOCAL_UNMATCHED_MAILBOX = "unmatched@outreach.test"
# The least time between two first contacts to one address that ``make local`` and the e2e scenarios
# apply (the local root's ``email_first_contact``): prod's 7 days cannot be waited out on the virtual
# clock, 15 minutes can (docs/local-semantics.md, "Where the local root differs from prod").
LOCAL_FIRST_CONTACT_GAP_SECONDS = 900


@dataclass
class LocalPipeline:
    """A running pipeline: emulator endpoint, applied outputs, pollers, web farm."""

    endpoint: str
    region: str
    clock: VirtualClock
    outputs: dict[str, Any]
    runtime: FunctionRuntime
    cloud: LocalCloud
    farm: WebFarm
    journal: Journal
    state: Path
    started: float = field(default_factory=time.monotonic)

    @property
    def pipeline(self) -> dict[str, Any]:
        value: dict[str, Any] = self.outputs["pipeline"]
        return value

    def client(self, service: str) -> Any:
        return client(service, self.endpoint, self.region)

    def loopback_url(self, url: str) -> str:
        """Where an applied function URL is served here: ``https://<url-id>.lambda-url.<region>.on.aws/``
        (as Terraform outputs it, path and query kept) -> ``http://127.0.0.1:<port>/...``."""
        return self.cloud.function_urls.loopback_url(url)

    def function_url(self, function_name: str) -> str:
        """The loopback address serving the URL of the function ``function_name`` (name or ARN)."""
        return self.loopback_url(self.cloud.function_urls.function_url(function_name))

    def handler_environment(self) -> dict[str, str]:
        """Environment under which this process may call the task store (and the contact ledger)
        against the emulator."""
        ledger = self.outputs.get("contacts_table_name") or self.pipeline.get("contacts_table_name")
        return {
            **({"CONTACTS_TABLE": str(ledger)} if ledger else {}),
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": self.region,
            "AWS_REGION": self.region,
            "TASKS_TABLE": self.pipeline["tasks_table_name"],
            "OPEN_INDEX_SHARDS": str(self.pipeline["open_index_shards"]),
            "SCRAPE_QUEUE_URL": self.pipeline["scrape_queue_url"],
            "SCRAPE_DLQ_URL": self.pipeline["scrape_dlq_url"],
            "RESULTS_BUCKET": self.pipeline["results_bucket"],
            "POWERTOOLS_SERVICE_NAME": "local-driver",
            "POWERTOOLS_METRICS_NAMESPACE": "outreach-local",
        }

    @contextlib.contextmanager
    def as_caller(self) -> Iterator[None]:
        """Run task-store calls (and the ``outreach`` command) in this process against the emulator,
        on the virtual clock."""
        from outreach import clients
        from outreach import clock as outreach_clock

        with overridden(self.handler_environment()):
            clients.reset()
            outreach_clock.set_time_source(self.clock.now)
            try:
                yield
            finally:
                outreach_clock.set_time_source(None)
                clients.reset()

    def create_job(self, job_id: str, urls: list[str]) -> Any:
        from outreach import task_store

        with self.as_caller():
            return task_store.create_scrape_job(job_id, urls)

    def job_counts(self, job_id: str) -> dict[str, int]:
        from outreach import task_store

        with self.as_caller():
            return dict(task_store.job_counts(job_id))

    def busy(self) -> bool:
        """Whether work is under way now: an invocation running, or a scrape message visible that the
        mapping has not received yet (under load the poller may take a while to get to it; the clock
        must not jump past the deadlines that message would still meet, such as a reconciler's
        threshold)."""
        if any(s.in_flight for s in self.runtime.stats.values()):
            return True
        attributes = self.client("sqs").get_queue_attributes(
            QueueUrl=self.pipeline["scrape_queue_url"], AttributeNames=["ApproximateNumberOfMessages"]
        )["Attributes"]
        return int(attributes.get("ApproximateNumberOfMessages", 0)) > 0

    def wait_terminal(
        self,
        job_id: str,
        *,
        timeout: float,
        idle_skip: float = 300.0,
        settle: float = 1.0,
        interval: float = 0.2,
        on_update: Callable[[JobProgress], None] | None = None,
    ) -> JobProgress:
        """Follow the job (the ``outreach job status --watch`` loop) until every task is terminal.

        When nothing is in flight or waiting in the scrape queue and the counters did not move for
        ``settle`` seconds, nothing can happen before some virtual deadline (a visibility timeout, a
        retry delay, a lease, the next reconciler run): the clock then jumps ``idle_skip`` virtual
        seconds, so idle virtual minutes cost no wall time. Raises FollowTimeoutError after ``timeout``
        real seconds.
        """
        last: dict[str, Any] = {"counts": None, "since": time.monotonic()}

        def update(progress: JobProgress) -> None:
            now = time.monotonic()
            if progress.counts != last["counts"] or self.busy():
                last["counts"], last["since"] = dict(progress.counts), now
            elif (
                idle_skip
                and now - last["since"] >= settle
                # an invocation may have started since busy() looked: the jump waits for it
                and self.runtime.advance_clock_if_idle(idle_skip)
            ):
                last["since"] = now
            if on_update is not None:
                on_update(progress)

        return follow_job(job_id, update, interval=interval, timeout=timeout, read_counts=self.job_counts)

    def tasks(self, job_id: str, kind: Kind = Kind.SCRAPE) -> list[dict[str, Any]]:
        """Every task row of the job of one kind (scrape tasks unless told), read from the table (the
        source of truth)."""
        from outreach import task_store

        request = {
            "FilterExpression": "job_id = :j AND kind = :k",
            "ExpressionAttributeValues": task_store.to_avs({":j": job_id, ":k": kind.value}),
        }
        with self.as_caller():
            return list(task_store.rows("scan", request))

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

    @property
    def receiving_region(self) -> str:
        """The Region SES receives the replies in (the pipeline's own when it names none)."""
        return str(self.pipeline.get("inbound_receiving_region") or self.region)

    def receive_mail(self, raw: bytes, *, recipients: list[str], sender: str | None = None) -> ReceivedEmail:
        """SES receives ``raw`` (a whole MIME message) for the envelope ``recipients`` in the receiving
        Region and runs the active receipt rule set's actions (``ses_receiving.receive_email``, on this
        stack's clock, journalled as ``ses.received``); ``sender`` is the envelope MAIL FROM (default:
        the message's Return-Path, else its From). What the rules did is returned; the processor runs
        later, from the inbound queue."""
        return receive_email(
            self.endpoint,
            self.receiving_region,
            raw,
            recipients=recipients,
            sender=sender,
            invoker=self.cloud.invoker,
            runtime=self.runtime,
            clock=self.clock,
            journal=self.journal,
        )

    def forwards(self) -> list[SentEmail]:
        """What the inbound processor forwarded, in the order SES accepted it: the Raw emails sent from
        its forwarder address (``raw`` holds each message's bytes as sent)."""
        sender = str(self.pipeline.get("inbound_forward_from") or "").lower()
        if not sender:
            return []
        return [e for e in sent_emails(self.region) if e.raw is not None and e.sender.lower() == sender]

    def alarm_state(self, alarm_name: str) -> str:
        """The alarm's state as DescribeAlarms answers it (OK, ALARM or INSUFFICIENT_DATA)."""
        alarms = self.client("cloudwatch").describe_alarms(AlarmNames=[alarm_name])["MetricAlarms"]
        if not alarms:
            raise LookupError(f"no alarm named {alarm_name}")
        return str(alarms[0]["StateValue"])

    def alarm_history(self, alarm_name: str | None = None) -> list[AlarmStateChange]:
        """Every state change of the stack's alarms (or of one), oldest first, with the virtual time it
        happened and the SNS topics it notified; each also put its event on the default bus."""
        return alarm_state_changes(self.region, alarm_name=alarm_name)

    def evaluate_alarms(self) -> list[AlarmStateChange]:
        """One round of the cloud's alarm loop now: the reputation metrics if due, then every alarm
        evaluated at the current virtual time. Returns the state changes it made (the loop runs by
        itself every second; this makes a round happen at a chosen moment, after a clock jump, say)."""
        return self.cloud.alarms.tick()

    def objects(self, bucket: str | None, prefix: str = "") -> list[str]:
        if not bucket:
            return []
        pages = self.client("s3").get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        return [o["Key"] for page in pages for o in page.get("Contents", [])]


@contextlib.contextmanager
def local_pipeline(
    *,
    sites: int,
    port: int | None = DEFAULT_PORT,
    scale: float = 10.0,
    region: str = "eu-central-1",
    dispatch_mode: str = "lambda",
    scraper_concurrency: int = 140,
    local_workers: int = 16,
    package_dir: Path | None = None,
    extra_variables: Mapping[str, str] | None = None,
    farm_options: Mapping[str, Any] | None = None,
    extra_env: Mapping[str, str] | None = None,
    reply_domain: str | None = None,
    unmatched_forward_to: str = LOCAL_UNMATCHED_MAILBOX,
    first_contact_gap_seconds: int | None = None,
    reputation: ReputationSettings | None = None,
) -> Iterator[LocalPipeline]:
    """Bring the whole pipeline up on loopback; tear every process down on exit. With
    ``reply_domain`` it receives replies there (unmatched ones forwarded to ``unmatched_forward_to``);
    with ``first_contact_gap_seconds`` the email worker keeps that gap between two first contacts to
    an address instead of modules/email's 7 days; ``reputation`` sets how the embedded SES measures
    and publishes its reputation metrics."""
    clock = VirtualClock(scale)
    workdir = Path(tempfile.mkdtemp(prefix="outreach-local-"))
    journal = Journal()
    try:
        with embedded_aws(port if port is not None else free_port(), clock=clock) as endpoint:
            variables: dict[str, Any] = {
                "endpoint": endpoint,
                "region": region,
                "dispatch_mode": dispatch_mode,
                "scraper_concurrency": scraper_concurrency,
            }
            if package_dir is not None:
                variables["package_dir"] = str(package_dir.resolve())
            if reply_domain is not None:
                variables["inbound_reply_domain"] = reply_domain
                variables["inbound_unmatched_forward_to"] = unmatched_forward_to
            if first_contact_gap_seconds is not None:
                variables["email_first_contact"] = f"{{gap_seconds = {int(first_contact_gap_seconds)}}}"
            variables.update(extra_variables or {})
            root = terraform_cli.copy_configuration(LOCAL_ROOT, workdir / "config")
            if package_dir is None:
                variables["package_dir"] = str(terraform_cli.REPO / "dist")
            state = workdir / "terraform.tfstate"
            outputs = terraform_cli.apply_root(
                root,
                variables={k: str(v) for k, v in variables.items()},
                state=state,
                data_dir=workdir / ".terraform",
                parallelism=APPLY_PARALLELISM,
            )
            runtime = FunctionRuntime(
                endpoint,
                clock,
                cache_dir=workdir / "functions",
                region=region,
                max_workers_per_function=local_workers,
                extra_env=extra_env,
            )
            farm = WebFarm(sites, **dict(farm_options or {})).start()
            cloud = LocalCloud(
                endpoint, clock, runtime, region=region, journal=journal, reputation=reputation
            )
            try:
                cloud.start()
                yield LocalPipeline(endpoint, region, clock, outputs, runtime, cloud, farm, journal, state)
            finally:
                # Close the runtime first: in-flight invocations end at once and no new ones start,
                # so the pollers stop without waiting out function timeouts.
                runtime.close()
                cloud.stop()
                farm.stop()
    finally:
        clock.close()
        shutil.rmtree(workdir, ignore_errors=True)


__all__ = [
    "LOCAL_FIRST_CONTACT_GAP_SECONDS",
    "LOCAL_REPLY_DOMAIN",
    "LOCAL_UNMATCHED_MAILBOX",
    "STATUSES",
    "TERMINAL",
    "AlarmStateChange",
    "FollowTimeoutError",
    "JobProgress",
    "LocalPipeline",
    "ReceivedEmail",
    "ReputationSettings",
    "local_pipeline",
]
