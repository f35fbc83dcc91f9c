"""Hostile sites on the embedded AWS: each ends Finished or Failed with its reason in one delivery.

One web-farm site per hostile kind (stacked-gzip bomb, nesting bomb, bogus charsets, bracketed links,
a ß domain, a robots.txt that disallows the site) runs through the deployed pipeline. None may crash,
time out or be retried, and the scraper workers' peak memory (VmHWM, the resident high-water mark of
each worker process, read from /proc) must stay under 300 MB.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from embedded_aws.webfarm import HOSTILE_KINDS
from tests.e2e.conftest import E2E, virtual_elapsed

PEAK_MEMORY_LIMIT_MB = 300


def test_every_hostile_site_ends_finished_or_failed_with_its_reason_in_one_delivery(e2e: E2E) -> None:
    # GIVEN a job of one farm site per hostile kind
    started_wall, started_virtual = time.monotonic(), e2e.stack.clock.now()
    sites = [e2e.pool.take(1, kinds=(kind,))[0] for kind in HOSTILE_KINDS]
    job_id = "e2e-hostile"
    timeouts_before = e2e.stack.runtime.stats.get(e2e.scraper)
    timeouts_seen = timeouts_before.timeouts if timeouts_before is not None else 0
    task_ids = e2e.create_job(job_id, sites)

    # WHEN the pipeline runs the job to its end
    e2e.wait_terminal(job_id, len(sites), timeout=240)

    # THEN each task ends as its kind says, with the named reason, claimed by exactly one delivery
    rows = e2e.task_rows(job_id)
    outcomes = {}
    for site in sites:
        row = rows[task_ids[site]]
        reason = HOSTILE_KINDS[site.kind]
        outcomes[site.kind] = (row["status"], str(row.get("failure_reason", "")).split(":", 1)[0])
        assert outcomes[site.kind] == ("Failed" if reason else "Finished", reason or ""), (site.kind, row)
        assert int(row["attempts"]) == 1, (site.kind, row)
    # AND the ß domain was stored and looked up under its IDNA 2008 name, never as fass.test
    sharp_s = next(s for s in sites if s.kind == "sharp_s")
    sharp_row = rows[task_ids[sharp_s]]
    assert "://xn--fa-hia.test:" in sharp_row["url"]
    assert "xn--fa-hia.test" in sharp_row["failure_reason"]
    # AND the robots-disallowed site's pages were never requested
    robots = next(s for s in sites if s.kind == "robots_disallowed")
    assert e2e.stack.farm.site_hits(robots.number) == 0
    # AND the results record the skipped links, the cut markup and what robots.txt decided
    documents = {
        site.kind: _result(e2e, rows[task_ids[site]]) for site in sites if not HOSTILE_KINDS[site.kind]
    }
    assert documents["bracketed_links"]["pages"][0]["links_skipped"] == 3
    assert documents["nesting_bomb"]["pages"][0]["markup_cut"] == "nesting"
    assert all(doc["robots"]["respected"] for doc in documents.values())
    # AND no scraper invocation timed out
    stats = e2e.stack.runtime.stats[e2e.scraper]
    assert stats.timeouts == timeouts_seen
    # AND the scraper workers' peak memory stayed under the limit
    peaks = _scraper_peak_rss_mb()
    assert peaks, "no scraper worker process found"
    assert max(peaks) < PEAK_MEMORY_LIMIT_MB, peaks
    e2e.record(
        "hostile sites",
        tasks=len(sites),
        outcomes={kind: status for kind, (status, _) in outcomes.items()},
        scraper_workers=len(peaks),
        scraper_peak_rss_mb=max(peaks),
        wall_seconds=round(time.monotonic() - started_wall, 1),
        virtual_seconds=virtual_elapsed(e2e, started_virtual),
    )


def _result(e2e: E2E, row: dict[str, Any]) -> dict[str, Any]:
    body = e2e.stack.client("s3").get_object(Bucket=e2e.results_bucket, Key=str(row["result_key"]))["Body"]
    document: dict[str, Any] = json.loads(body.read())
    return document


def _scraper_peak_rss_mb() -> list[float]:
    """VmHWM of this test process's live scraper workers (the runtime keeps warm workers alive)."""
    peaks: list[float] = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
            status = (proc / "status").read_text()
        except OSError:
            continue
        if not any(part.endswith(b"worker_bootstrap.py") for part in cmdline):
            continue
        if b"outreach.scraper.lambda_handler" not in cmdline:
            continue
        if f"PPid:\t{os.getpid()}\n" not in status:
            continue
        peaks.extend(
            round(int(line.split()[1]) / 1024, 1) for line in status.splitlines() if line.startswith("VmHWM:")
        )
    return peaks
