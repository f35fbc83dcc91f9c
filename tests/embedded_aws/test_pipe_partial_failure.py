"""A pipe whose SQS target partly fails retries only the failed records (EventBridge Pipes, partial
batch failure: https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-pipes-batching-concurrency.html)."""

from __future__ import annotations

import json

import pytest

from embedded_aws import faults as fault_injection
from embedded_aws.clock import VirtualClock
from embedded_aws.pipes import PipePoller
from tests.embedded_aws.conftest import Lab, wait_for
from tests.embedded_aws.test_pipes import _bodies, _pipe, pipes  # noqa: F401 - the fixture

pytestmark = pytest.mark.e2e


def test_a_partly_failed_send_message_batch_retries_only_the_failed_entries(
    lab: Lab,
    clock: VirtualClock,
    pipes: list[PipePoller],  # noqa: F811 - the fixture imported above
) -> None:
    # GIVEN a pipe (3 retries, no bisect) and 4 Pending tasks in one batch, the queue refusing the
    # "bad" task's entry twice while accepting the rest of the same SendMessageBatch
    poller, url, dlq_url = _pipe(lab, clock, pipes, MaximumRetryAttempts=3)
    for name in ("t1", "t2", "bad", "t3"):
        lab.put("tasks", name, kind="scrape", status="Pending")
    with fault_injection.inject() as faults:
        refused = faults.refuse_entries('"bad"', times=2)
        # WHEN the pipe runs
        poller.start()
        wait_for(lambda: poller.stats.records_done == 4)
        # THEN every task reached the queue exactly once: the accepted entries were never re-sent
        assert _bodies(lab, url) == sorted(json.dumps({"task_id": t}) for t in ("t1", "t2", "bad", "t3"))
        assert [faults.sends_of(url.rsplit("/", 1)[1], t) for t in ("t1", "t2", "bad", "t3")] == [1, 1, 1, 1]
    # AND the refused entry was tried 3 times: refused twice, then sent; nothing was dead-lettered
    assert refused.fired == 2
    assert poller.stats.retries == 2
    assert poller.stats.invocations == 3
    assert poller.stats.discarded_records == 0
    assert lab.visible(dlq_url) == 0
