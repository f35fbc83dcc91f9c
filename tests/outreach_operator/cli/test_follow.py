"""Following a job: readings until every task is terminal, with rate and time left."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from outreach_operator.cli.follow import JobProgress, follow_job
from outreach_operator.errors import FollowTimeoutError


class Pipeline:
    """Counters that move by one step each time the follower sleeps, on a clock the follower reads."""

    def __init__(self, steps: list[dict[str, int]]) -> None:
        self.steps = steps
        self.position = 0
        self.now = 100.0

    def counts(self, job_id: str) -> Mapping[str, int]:
        return self.steps[min(self.position, len(self.steps) - 1)]

    def sleep(self, seconds: float) -> None:
        self.position += 1
        self.now += seconds


def _counts(pending: int, running: int, finished: int, failed: int = 0) -> dict[str, int]:
    return {"Pending": pending, "Running": running, "Finished": finished, "Failed": failed, "Cancelled": 0}


def test_following_reports_each_reading_with_rate_and_time_left_until_every_task_is_terminal() -> None:
    pipeline = Pipeline([_counts(10, 0, 0), _counts(6, 2, 2), _counts(2, 2, 5, 1), _counts(0, 0, 9, 1)])
    seen: list[JobProgress] = []
    last = follow_job(
        "j",
        seen.append,
        interval=5.0,
        read_counts=pipeline.counts,
        sleep=pipeline.sleep,
        monotonic=lambda: pipeline.now,
    )
    assert [p.terminal for p in seen] == [0, 2, 6, 10]
    assert seen[0].rate_per_second is None and seen[0].eta_seconds is None
    # 2 tasks in 5 s: 0.4/s, 8 open -> 20 s left; then 6 in 10 s: 0.6/s, 4 open -> about 6.7 s
    assert seen[1].rate_per_second == pytest.approx(0.4)
    assert seen[1].eta_seconds == pytest.approx(20.0)
    assert seen[2].eta_seconds == pytest.approx(4 / 0.6)
    assert last.is_done and last.eta_seconds == 0.0
    assert last.as_dict()["counts"] == _counts(0, 0, 9, 1)


def test_following_gives_up_after_the_timeout_with_the_last_reading() -> None:
    pipeline = Pipeline([_counts(3, 0, 0)])
    with pytest.raises(FollowTimeoutError) as raised:
        follow_job(
            "j", lambda _: None, interval=1.0, timeout=3.0,
            read_counts=pipeline.counts, sleep=pipeline.sleep, monotonic=lambda: pipeline.now,
        )  # fmt: skip
    assert raised.value.progress.open == 3
    assert "3 of 3 tasks still open" in str(raised.value)


def test_a_reading_taken_in_the_middle_of_a_transition_does_not_end_the_follow() -> None:
    # GIVEN counters read by a Query, which sees a transaction half applied (read-committed): one
    # reading has the last task in no counter, so nothing looks open while 4 of 5 are terminal
    readings = iter(
        [_counts(0, 1, 4), _counts(0, 0, 4), _counts(0, 0, 5), _counts(0, 0, 5), _counts(0, 0, 5)]
    )
    pipeline = Pipeline([])
    last = follow_job(
        "j", lambda _: None, interval=1.0,
        read_counts=lambda _job: next(readings), sleep=pipeline.sleep, monotonic=lambda: pipeline.now,
    )  # fmt: skip
    # THEN the follow ends only on a reading that a second one confirms: all 5 terminal
    assert last.terminal == 5
