"""Rules of the makespan's phases: they add up to the time over the limit, each cause in its phase."""

from __future__ import annotations

import pytest

from outreach_dev.bench.makespan_phases import Span, split


def test_the_phases_add_up_to_the_makespan_over_the_limit() -> None:
    # GIVEN 3 tasks on 2 slots from 0 to 100: dispatch takes 10 s, one site fails and is retried at 80
    spans = [
        Span(10.0, 40.0, 1),
        Span(40.0, 70.0, 1),
        Span(10.0, 30.0, 1),
        Span(80.0, 90.0, 2),
    ]
    mean = (30.0 + 30.0 + 20.0 + 10.0) / 4
    limit = 3 * mean / 2
    # WHEN the makespan is split
    phases = split(spans, start=0.0, end=100.0, tasks=3, mean_latency=mean, concurrency=2)
    # THEN each cause has its share, and together they are the makespan over the limit
    assert phases.before_first_scrape == pytest.approx(10.0)
    assert phases.work_phase == pytest.approx(60.0)
    assert phases.idle_while_working == pytest.approx((2 * 60.0 - 80.0) / 2)
    assert phases.tail_phase == pytest.approx(30.0)
    assert phases.idle_in_retry_tail == pytest.approx((2 * 30.0 - 10.0) / 2)
    assert phases.redelivery_work == pytest.approx((90.0 - 3 * mean) / 2)
    assert phases.over_limit == pytest.approx(100.0 - limit)


def test_a_retry_after_the_last_first_delivery_is_counted_as_waiting_in_the_tail() -> None:
    spans = [Span(0.0, 10.0, 1), Span(40.0, 50.0, 2)]
    phases = split(spans, start=0.0, end=50.0, tasks=1, mean_latency=10.0, concurrency=1)
    assert phases.work_phase == pytest.approx(10.0)
    assert phases.idle_while_working == pytest.approx(0.0)
    assert phases.idle_in_retry_tail == pytest.approx(30.0)
    assert phases.redelivery_work == pytest.approx(10.0)


def test_an_invocation_outside_the_job_counts_only_for_its_part_inside() -> None:
    spans = [Span(-5.0, 10.0, 1), Span(0.0, 12.0, 1)]
    phases = split(spans, start=0.0, end=10.0, tasks=2, mean_latency=10.0, concurrency=2)
    assert phases.before_first_scrape == 0.0
    assert phases.work_phase == pytest.approx(10.0)
    assert phases.idle_while_working == pytest.approx(0.0)
    assert phases.over_limit == pytest.approx(0.0)


def test_a_job_without_invocations_is_not_split() -> None:
    with pytest.raises(ValueError, match="invocations"):
        split([], start=0.0, end=10.0, tasks=1, mean_latency=1.0, concurrency=1)
