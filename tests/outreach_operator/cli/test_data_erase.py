"""``outreach data erase``: one job's or one address's data goes from every store, nothing else does."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from embedded_aws.ses_v2 import support_ses_v2
from outreach import clock, task_store
from outreach.email_schedules import ScheduleTarget, ensure_schedule
from outreach.email_task import PlannedEmail
from outreach.personal_data import address_hash
from outreach.results import result_key, store_result
from outreach.task_ids import normalise_url, scrape_task_id
from outreach.task_model import Kind, Status
from outreach_operator import task_actions
from outreach_operator.cli import data as data_command
from outreach_operator.erasure import deletion
from outreach_operator.erasure.inventory import find as inventory_of
from tests.outreach_operator.cli.conftest import Run, as_json
from tests.support.aws import REGION, Resources
from tests.support.email import FIRST_SEND, planned

GROUP = "outreach-test-email"
FAILURES = "outreach-test-failures"
JANE = "jane.doe@acme.example"
OTHER = "info@other.example"
TARGET = ScheduleTarget(
    group=GROUP,
    worker_arn=f"arn:aws:lambda:{REGION}:123456789012:function:outreach-test-email-worker",
    role_arn="arn:aws:iam::123456789012:role/outreach-test-email-scheduler",
    dlq_arn=f"arn:aws:sqs:{REGION}:123456789012:outreach-test-email-dlq",
)


@pytest.fixture
def stores(resources: Resources) -> Iterator[Resources]:
    """The results bucket versioned (as private-bucket makes it), a failure bucket, a schedule group
    and SES's suppression list; the clock a day before the campaign's first send."""
    s3 = boto3.client("s3", region_name=REGION)
    s3.put_bucket_versioning(Bucket=resources.bucket, VersioningConfiguration={"Status": "Enabled"})
    s3.create_bucket(Bucket=FAILURES, CreateBucketConfiguration={"LocationConstraint": REGION})
    s3.put_bucket_versioning(Bucket=FAILURES, VersioningConfiguration={"Status": "Enabled"})
    boto3.client("scheduler", region_name=REGION).create_schedule_group(Name=GROUP)
    support_ses_v2()
    clock.set_time_source(lambda: FIRST_SEND.timestamp() - 86400)
    yield resources
    clock.set_time_source(None)


def _flags() -> list[str]:
    return ["--failure-bucket", FAILURES, "--email-schedule-group", GROUP]


def _scrape_job(job_id: str, sites: dict[str, list[str]], *, text: str = "") -> dict[str, str]:
    """A finished scrape job: each site's result names ``sites[url]`` (twice written: two versions)."""
    urls = list(sites)
    task_store.create_scrape_job(job_id, urls)
    task_store.record_job(job_id, kind=Kind.SCRAPE, source="sites.csv", tasks=len(urls), created_by="ops")
    ids = {}
    for url, addresses in sites.items():
        task_id = scrape_task_id(job_id, normalise_url(url))
        task = task_store.get_task(task_id)
        assert task is not None
        claimed = task_store.claim(task, message_id="m-1", receive_count=1, lease_seconds=300)
        emails = [{"address": a, "page": url, "decoded": "mailto"} for a in addresses]
        document = {
            "final_url": url,
            "title": "Acme",
            "emails": emails,
            "phones": [],
            "text": text,
            "pages": [],
        }
        store_result(job_id, task_id, {**document, "title": "Acme (first run)"})
        key = store_result(job_id, task_id, document)
        task_store.finish(claimed, result_key=key, summary={"title": "Acme", "emails": emails})
        ids[url] = task_id
    return ids


def _campaign(emails: list[PlannedEmail]) -> None:
    task_store.create_email_tasks(emails)
    for email in emails:
        ensure_schedule(email, TARGET)


def _failure_record(key: str, task_ids: list[str], *, recipient: str | None = None) -> None:
    image: dict[str, Any] = {"task_id": {"S": task_ids[0]}}
    if recipient:
        image["recipient"] = {"S": recipient}
    records = [{"dynamodb": {"Keys": {"task_id": {"S": t}}, "NewImage": image}} for t in task_ids]
    body = {"DDBStreamBatchInfo": {"batchSize": len(records)}, "payload": json.dumps({"Records": records})}
    boto3.client("s3", region_name=REGION).put_object(
        Bucket=FAILURES, Key=key, Body=json.dumps(body).encode()
    )


def _items(resources: Resources) -> dict[str, dict[str, Any]]:
    dynamodb = boto3.client("dynamodb", region_name=REGION)
    items: dict[str, dict[str, Any]] = {}
    request: dict[str, Any] = {"TableName": resources.table, "ConsistentRead": True}
    while True:
        page = dynamodb.scan(**request)
        items.update({item["task_id"]["S"]: item for item in page["Items"]})
        if "LastEvaluatedKey" not in page:
            return items
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def _versions(bucket: str) -> dict[str, list[str]]:
    listed = boto3.client("s3", region_name=REGION).list_object_versions(Bucket=bucket)
    found: dict[str, list[str]] = {}
    for entry in [*listed.get("Versions", []), *listed.get("DeleteMarkers", [])]:
        found.setdefault(entry["Key"], []).append(entry["VersionId"])
    return found


def _schedules() -> set[str]:
    listed = boto3.client("scheduler", region_name=REGION).list_schedules(GroupName=GROUP)["Schedules"]
    return {s["Name"] for s in listed}


def _state(resources: Resources) -> dict[str, Any]:
    return {
        "items": _items(resources),
        "results": _versions(resources.bucket),
        "failures": _versions(FAILURES),
        "schedules": _schedules(),
    }


def test_erasing_a_job_deletes_its_rows_counters_results_and_failure_records_and_nothing_of_another_job(
    run: Run, stores: Resources
) -> None:
    # GIVEN job "acme" (two finished sites, each result written twice) and job "other", and a failure
    # record for each
    acme = _scrape_job("acme", {"https://a.example": [JANE], "https://b.example": [OTHER]})
    other = _scrape_job("other", {"https://c.example": [OTHER]})
    _failure_record("aws/lambda/acme.json", list(acme.values()))
    _failure_record("aws/lambda/other.json", list(other.values()))
    before = _state(stores)
    # WHEN the job is erased
    report = as_json(run("--json", "data", "erase", "--job", "acme", extra=_flags()))
    # THEN no row, result version or failure record of it is left
    after = _state(stores)
    assert [t for t in after["items"] if "acme" in t] == []
    assert [k for k in after["results"] if k.startswith("results/acme/")] == []
    assert "aws/lambda/acme.json" not in after["failures"]
    # (its tasks, its row and the counter shards the tasks used; two versions of each result)
    gone = set(before["items"]) - set(after["items"])
    assert gone == {t for t in before["items"] if "acme" in t}
    assert {*acme.values(), "job#acme"} <= gone
    assert report["found"]["result_objects"] == 2 and report["found"]["result_versions"] == 4
    assert report["deleted"]["table_rows"] == len(gone)
    # AND everything of the other job is exactly as it was
    assert after["items"] == {t: i for t, i in before["items"].items() if t not in gone}
    assert after["results"] == {
        k: v for k, v in before["results"].items() if not k.startswith("results/acme/")
    }
    assert after["failures"] == {"aws/lambda/other.json": before["failures"]["aws/lambda/other.json"]}
    assert task_store.job_counts("other")["Finished"] == 1
    assert "exports" in report["reminders"][0]


def test_erasing_an_address_deletes_its_email_tasks_schedules_and_the_sites_naming_it_and_nothing_else(
    run: Run, stores: Resources
) -> None:
    # GIVEN a campaign with two steps to Jane and one to someone else (all Pending, scheduled), a job
    # whose site a names Jane, site b only someone else, site c Jane only in its page text, and a
    # failure record of one of Jane's tasks; Jane bounced once, so SES suppresses her
    campaign = [planned(JANE), planned(JANE, step=2), planned(OTHER)]
    _campaign(campaign)
    sites = _scrape_job("acme", {"https://a.example": [JANE], "https://b.example": [OTHER]})
    in_text = _scrape_job("prose", {"https://c.example": []}, text=f"write to {JANE.upper()} for offers")
    _failure_record("aws/lambda/jane.json", [campaign[0].task_id], recipient=JANE)
    _failure_record("aws/lambda/b.json", [sites["https://b.example"]])
    boto3.client("sesv2", region_name=REGION).put_suppressed_destination(EmailAddress=JANE, Reason="BOUNCE")
    before = _state(stores)
    # WHEN the address is erased, spelled in another case
    report = as_json(run("--json", "data", "erase", "--address", "Jane.Doe@ACME.example", extra=_flags()))
    # THEN her email tasks and their schedules are gone, and the campaign counts only the other email
    after = _state(stores)
    jane_tasks = {campaign[0].task_id, campaign[1].task_id}
    jane_sites = {sites["https://a.example"], in_text["https://c.example"]}
    assert set(before["items"]) - set(after["items"]) == jane_tasks | jane_sites
    assert before["schedules"] - after["schedules"] == {campaign[0].schedule_name, campaign[1].schedule_name}
    assert task_store.job_counts("spring")[Status.PENDING.value] == 1
    assert task_store.job_counts("acme")[Status.FINISHED.value] == 1
    # AND the results naming her (in the contacts or only in the text) are gone in every version
    gone_results = set(before["results"]) - set(after["results"])
    assert gone_results == {
        result_key("acme", sites["https://a.example"]),
        result_key("prose", in_text["https://c.example"]),
    }
    assert set(before["failures"]) - set(after["failures"]) == {"aws/lambda/jane.json"}
    # AND every other row (but the counter shards the erased tasks were counted in) is as it was
    for task_id, item in after["items"].items():
        if item["kind"]["S"] != "job_counter":
            assert item == before["items"][task_id]
    assert after["results"] == {k: v for k, v in before["results"].items() if k not in gone_results}
    assert after["schedules"] == {campaign[2].schedule_name}
    # AND she stays on the suppression list, as the report says; it names the hash her log lines carry
    ses = boto3.client("sesv2", region_name=REGION)
    assert ses.get_suppressed_destination(EmailAddress=JANE)["SuppressedDestination"]["Reason"] == "BOUNCE"
    assert report["kept"][0]["state"].startswith("kept (BOUNCE)")
    # AND it names the stores holding her data that it did not erase
    assert {"contact_ledger", "inbound_bucket"} <= {entry["store"] for entry in report["not_checked"]}
    assert report["request"]["address_hash"] == address_hash(JANE)
    assert report["deleted"]["table_rows"] == 4 and report["deleted"]["email_schedules"] == 2


@pytest.mark.parametrize("subject", [["--job", "acme"], ["--address", JANE]], ids=["job", "address"])
def test_a_dry_run_counts_per_store_what_would_go_and_changes_nothing(
    run: Run, stores: Resources, subject: list[str]
) -> None:
    _campaign([planned(JANE, campaign="acme-mail")])
    task_actions.cancel(task_store.get_task(planned(JANE, campaign="acme-mail").task_id), reason="test")  # type: ignore[arg-type]
    acme = _scrape_job("acme", {"https://a.example": [JANE]})
    _failure_record("aws/lambda/acme.json", list(acme.values()), recipient=JANE)
    before = _state(stores)
    report = as_json(run("--json", "data", "erase", *subject, "--dry-run", extra=_flags()))
    assert _state(stores) == before
    assert report["dry_run"] is True and report["deleted"] is None
    assert report["found"]["result_objects"] == 1 and report["found"]["result_versions"] == 2
    assert report["found"]["failure_records"] == 1
    assert report["found"]["table_rows"] >= 1


def test_a_job_with_open_tasks_is_refused_and_nothing_is_deleted(run: Run, stores: Resources) -> None:
    # GIVEN a campaign whose emails are still Pending (scheduled)
    _campaign([planned(JANE), planned(OTHER)])
    before = _state(stores)
    # WHEN the campaign is erased
    result = run("data", "erase", "--job", "spring", extra=_flags())
    # THEN it is refused with what to do first, and nothing is deleted
    assert result.exit_code == 2
    assert "2 open tasks" in result.stderr and "outreach campaign cancel spring" in result.stderr
    assert _state(stores) == before


def test_an_erasure_stopped_halfway_says_what_was_deleted_and_a_rerun_deletes_the_rest(
    run: Run, stores: Resources, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a finished job, and S3 refusing deletes
    _scrape_job("acme", {"https://a.example": [JANE]})

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("S3 is down")

    monkeypatch.setattr(deletion, "delete_versions", refuse)
    # WHEN it is erased THEN it exits 1 naming what went and what is left
    result = run("data", "erase", "--job", "acme", extra=_flags())
    assert result.exit_code == 1
    assert "tasks table rows: " in result.stderr and "result object versions: 2" in result.stderr
    assert "S3 is down" in result.stderr
    assert [t for t in _items(stores) if "acme" in t] == []
    assert len(_versions(stores.bucket)) == 1
    # AND the same command, once S3 works again, deletes what is left
    monkeypatch.undo()
    report = as_json(run("--json", "data", "erase", "--job", "acme", extra=_flags()))
    assert report["deleted"]["result_versions"] == 2 and report["deleted"]["table_rows"] == 0
    assert _versions(stores.bucket) == {}


@pytest.mark.parametrize(
    "args", [[], ["--job", "acme", "--address", JANE], ["--address", "not-an-address"]], ids=str
)
def test_an_erasure_must_name_exactly_one_job_or_one_address(
    run: Run, stores: Resources, args: list[str]
) -> None:
    result = run("data", "erase", *args, extra=_flags())
    assert result.exit_code == 2
    assert (
        "exactly one of --job and --address" in result.stderr or "is not an e-mail address" in result.stderr
    )


def test_a_task_a_worker_claims_during_the_erasure_is_left_and_reported(
    run: Run, stores: Resources, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a Pending email to Jane, whose worker claims it right after the erasure has read the table
    email = planned(JANE)
    _campaign([email])

    def find_then_claim(*args: Any, **kwargs: Any) -> Any:
        inventory = inventory_of(*args, **kwargs)
        clock.set_time_source(lambda: FIRST_SEND.timestamp())
        task = task_store.get_task(email.task_id)
        assert task is not None
        task_store.claim_email(task, owner="worker-1", lease_seconds=300)
        return inventory

    monkeypatch.setattr(data_command, "find", find_then_claim)
    # WHEN the address is erased
    result = run("--json", "data", "erase", "--address", JANE, extra=_flags())
    # THEN the claimed row is left as the worker has it (not deleted under it), and the run says so
    assert result.exit_code == 1
    assert "changed after they were read" in result.stderr and email.task_id in result.stderr
    report = json.loads(result.stdout)
    assert report["deleted"]["changed_since_read"] == [email.task_id]
    task = task_store.get_task(email.task_id)
    assert task is not None and task.status is Status.RUNNING
    assert task_store.job_counts("spring")[Status.RUNNING.value] == 1
