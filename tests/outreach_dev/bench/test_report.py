"""Rules of the bench's report: only measured numbers are shown, a missing measurement is said in words."""

from __future__ import annotations

import math

import pytest

from outreach_dev.bench.index_hot_spot import HotSpot
from outreach_dev.bench.report import Figure, MeasurementError, Section, failed, render


def test_a_figure_that_is_not_a_finite_number_is_refused() -> None:
    with pytest.raises(MeasurementError):
        Figure("time", math.nan, "s")
    with pytest.raises(MeasurementError):
        Figure("time", 1.0, "s", baseline=math.inf)


def test_the_ratio_is_ours_over_the_baseline_and_absent_without_one() -> None:
    assert Figure("calls", 1.0, "calls", baseline=10.0).ratio == pytest.approx(0.1)
    assert Figure("calls", 1.0, "calls").ratio is None


def test_a_section_that_failed_shows_not_measured_and_its_reason_and_no_number() -> None:
    # GIVEN one measured section and one that failed
    measured = Section("calls per task")
    measured.add(
        Figure("dispatch: SQS calls per task", 0.1, "calls", baseline=1.0, target="<= 0.1", met=True)
    )
    broken = Section("makespan", error="StackError: terraform apply failed")
    # WHEN the table is rendered
    table = render([measured, broken])
    # THEN the measured line carries ours, baseline, ratio and verdict; the failed one only its reason
    lines = table.splitlines()
    assert "0.1" in lines[2] and "1.00" in lines[2] and "met: <= 0.1" in lines[2]
    assert lines[3].split()[:3] == ["makespan", "NOT", "MEASURED"]
    assert "StackError: terraform apply failed" in lines[3]
    assert not any(ch.isdigit() for ch in lines[3])
    assert failed([measured, broken]) == ["makespan"]


def test_a_missed_target_is_marked_missed() -> None:
    section = Section("reconciler scaling")
    section.add(Figure("items read", 500, "items", target="<= 120", met=False))
    assert "MISSED: <= 120" in render([section])


def test_the_index_key_throttles_when_concurrent_creators_pass_the_partition_limit() -> None:
    spot = HotSpot(tasks_per_second=300.0)
    assert spot.utilisation == pytest.approx(0.3)
    assert spot.creators_before_throttling() == 3
    assert spot.shards_needed(concurrent_creators=3) == 1
    assert spot.shards_needed(concurrent_creators=4) == 2
    assert spot.seconds_on_the_key(3_000) == pytest.approx(10.0)


def test_one_creator_faster_than_the_partition_limit_throttles_alone_and_needs_shards() -> None:
    spot = HotSpot(tasks_per_second=1_735.0)
    assert spot.creators_before_throttling() == 0
    assert spot.shards_needed(concurrent_creators=1) == 2
