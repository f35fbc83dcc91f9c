"""``outreach job``: create from a file, status, list, export and cancel, against moto."""

from __future__ import annotations

import csv
import json
import threading
from pathlib import Path

import pytest

from outreach import task_store
from outreach.task_ids import normalise_url, scrape_task_id
from tests.support.aws import Resources
from tests.unit.cli.conftest import OPERATOR, Run, as_json, aws_state, claim_task, fail_task, finish_task


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
    assert [i for i in aws_state(resources)["items"] if '"job_counter"' in i or '"scrape"' in i] == [
        i for i in after_first["items"] if '"job_counter"' in i or '"scrape"' in i
    ]


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
    example = min(ids[1], ids[2])
    assert report["failures"] == [
        {
            "reason": "http_status",
            "count": 2,
            "example_url": urls[ids.index(example)] + "/",
            "example_task": example,
        },
        {"reason": "not_html", "count": 1, "example_url": "https://s3.example/", "example_task": ids[3]},
    ]
    human = run("job", "status", "j4")
    assert human.exit_code == 0
    assert "Failed 3" in human.stdout and "http_status" in human.stdout


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
    assert {r["phones"] for r in table} == {"+4930583920;+4930583929 (fax)"}


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
