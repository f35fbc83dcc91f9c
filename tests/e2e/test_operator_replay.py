"""An operator heals a poison stream record with `outreach failures replay`, before the reconciler would.

The runbook for the failure bucket's notification: find the cause, fix it, then re-drive the record's
tasks from the table. The stream's own records expire after 24 hours, so the replay reads the
failure record for the shard and sequence range, the table for which of its tasks are still Pending,
and sends those to the scrape queue; the record is then tagged as replayed.
"""

from __future__ import annotations

import json
import time

from embedded_aws.faults import Faults
from outreach_dev.local_run import outreach_command
from tests.e2e.conftest import E2E, virtual_elapsed
from tests.e2e.stacks import SECOND_STACK

pytestmark = SECOND_STACK


def test_failures_replay_heals_the_tasks_of_a_poison_stream_record(e2e: E2E, faults: Faults) -> None:
    # GIVEN a poison stream record written to the failure bucket (its send hangs past the timeout)
    timeout = int(
        e2e.stack.client("lambda").get_function_configuration(FunctionName=e2e.dispatcher)["Timeout"]
    )
    started_wall, started_virtual = time.monotonic(), e2e.stack.clock.now()
    # Sites that answer: the poison task must be able to finish once replayed (not a 404, 410 or PDF).
    sites = e2e.pool.take(3, kinds=("normal",))
    job_id = "e2e-operator-replay"
    poison = e2e.task_id(job_id, sites[1])
    stall = faults.stall_send(poison, e2e.stack.clock, hold_seconds=timeout + 1)
    records_before = set(e2e.stack.objects(e2e.failure_bucket))
    task_ids = e2e.create_job(job_id, sites)
    e2e.wait_until(
        lambda: len(set(e2e.stack.objects(e2e.failure_bucket)) - records_before) == 1,
        timeout=120,
        what="the poison record in the failure bucket",
    )
    (record_key,) = set(e2e.stack.objects(e2e.failure_bucket)) - records_before
    assert e2e.task_rows(job_id)[poison]["status"] == "Pending"

    # WHEN the operator fixes the cause and replays the failure records, first as a dry run
    faults.heal(stall)
    code, out = outreach_command(e2e.stack, "--json", "failures", "replay", "--dry-run")
    assert code == 0, out
    planned = {r["key"]: r for r in json.loads(out)["records"]}
    assert planned[record_key]["to_send"] == [poison]
    assert faults.sends_of(e2e.scrape_queue_name, poison) == 0
    code, out = outreach_command(e2e.stack, "--json", "failures", "replay", "--operator", "e2e")
    assert code == 0, out

    # THEN the poison task was sent once, by the replay, and finished; the record is marked replayed
    counts = e2e.wait_terminal(job_id, len(sites), timeout=120, idle_skip=60)
    rows = e2e.task_rows(job_id)
    assert rows[poison]["status"] == "Finished"
    assert [faults.sends_of(e2e.scrape_queue_name, tid) for tid in task_ids.values()] == [1] * len(sites)
    assert "redispatches" not in rows[poison]
    code, out = outreach_command(e2e.stack, "--json", "failures", "list", "--all")
    assert code == 0, out
    listed = {r["key"]: r for r in json.loads(out)}
    assert listed[record_key]["replayed"]
    e2e.record(
        "poison stream record, replayed by the operator",
        tasks=len(sites),
        replayed=1,
        lost=len(sites) - sum(counts.get(s, 0) for s in ("Finished", "Failed")),
        wall_seconds=round(time.monotonic() - started_wall, 1),
        virtual_seconds=virtual_elapsed(e2e, started_virtual),
    )
