"""Rules of the two-job figures and of the timelines and pictures the bench draws."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from outreach_dev.bench import plots
from outreach_dev.bench.makespan import Makespan
from outreach_dev.bench.makespan_phases import Phases
from outreach_dev.bench.timeline import Timeline, job_of
from outreach_dev.bench.two_jobs import JobRun, section


def _timeline() -> Timeline:
    timeline = Timeline(interval=2.0)
    timeline.add(0.0, {"big": 16}, {"big": 300})
    timeline.add(2.0, {"big": 10, "small": 6}, {"big": 290, "small": 20})
    timeline.retries["big"] = [1.0]
    return timeline


def test_a_job_first_seen_later_has_zeros_before_it_in_every_series() -> None:
    timeline = _timeline()
    assert timeline.busy == {"big": [16, 10], "small": [0, 6]}
    assert timeline.queued == {"big": [300, 290], "small": [0, 20]}
    assert Timeline.from_dict(timeline.as_dict()) == timeline


def test_an_invocation_belongs_to_its_messages_group_and_a_receive_above_one_is_a_retry() -> None:
    record: dict[str, Any] = {
        "body": '{"task_id": "scrape#job-b#abc"}',
        "attributes": {"ApproximateReceiveCount": "2"},
    }
    assert job_of(
        {"Records": [{**record, "attributes": {**record["attributes"], "MessageGroupId": "job-a"}}]}
    ) == (
        "job-a",
        2,
    )
    # without a group the job is read from the task id
    assert job_of({"Records": [record]}) == ("job-b", 2)


def test_an_invocation_of_one_of_a_job_s_tenants_belongs_to_that_job() -> None:
    # a job spread over tenants (outreach.scrape_tenants): the group is <job>#<n>
    record: dict[str, Any] = {
        "body": '{"task_id": "scrape#job-b#abc"}',
        "attributes": {"ApproximateReceiveCount": "1", "MessageGroupId": "job-a#17"},
    }
    assert job_of({"Records": [record]}) == ("job-a", 1)


def test_the_big_job_is_held_to_its_makespan_alone_plus_the_small_jobs_work() -> None:
    small = JobRun(tasks=34, makespan=60.0, mean_latency=8.0, concurrency=16)
    big = JobRun(tasks=343, makespan=200.0, mean_latency=8.0, concurrency=16, busy_while_queued=(16, 14))
    result = section(
        343,
        34,
        small_alone=small,
        big_alone=big,
        small_together=84.0,
        big_together=224.4,
        timeline=_timeline(),
        slots=16,
    )
    rows = {f.measure.split(" (")[0]: f for f in result.figures}
    # 200 + 34 * 8 / 16 = 217: 224.4 / 217 is 1.034, within 1.1; the small job took 1.4 times alone
    assert rows["big job"].value == pytest.approx(224.4 / 217.0)
    assert rows["big job"].met is True
    assert rows["small job"].value == pytest.approx(1.4)
    assert rows["small job"].met is True


def _lone_job_rows(big: JobRun) -> dict[str, Any]:
    result = section(
        343, 34, small_alone=JobRun(34, 60.0, 8.0, 16), big_alone=big, small_together=84.0,
        big_together=224.4, timeline=_timeline(), slots=16,
    )  # fmt: skip
    return {f.measure.split(" /")[0]: f for f in result.figures if f.measure.startswith("big job alone")}


def test_a_lone_job_that_reached_every_slot_meets_the_every_slot_row() -> None:
    rows = _lone_job_rows(JobRun(343, 200.0, 8.0, 16, busy_while_queued=(16, 15, 13)))
    assert rows["big job alone: most scrapers running at once"].value == pytest.approx(1.0)
    assert rows["big job alone: most scrapers running at once"].met is True
    assert rows["big job alone: mean busy slots while its messages wait"].value == pytest.approx(44 / 48)


def test_a_lone_job_held_below_the_slots_misses_the_every_slot_row() -> None:
    # a cap of 8 messages in flight on a lone job: it never runs more than 8 of the 16 slots
    rows = _lone_job_rows(JobRun(343, 400.0, 8.0, 8, busy_while_queued=(8, 8)))
    assert rows["big job alone: most scrapers running at once"].value == pytest.approx(0.5)
    assert rows["big job alone: most scrapers running at once"].met is False


def test_the_timeline_gives_a_jobs_busy_slots_only_while_its_messages_wait() -> None:
    timeline = _timeline()
    timeline.add(4.0, {"small": 3}, {"big": 0, "small": 0})
    assert timeline.busy_while_queued("big") == [16, 10]
    assert timeline.busy_while_queued("small") == [6]


def test_the_pictures_are_drawn_beside_the_results_from_the_sections_timelines(tmp_path: Path) -> None:
    job = Makespan(
        tasks=10, makespan=100.0, mean_latency=9.0, concurrency=16, invocations=11, retried=1,
        phases=Phases(0.0, 0.0, 0.0, 0.0, 0.0, 0.0), timeline=_timeline(),
    )  # fmt: skip
    from outreach_dev.bench.makespan import section as makespan_section

    sections = [
        makespan_section(10, job, job),
        section(343, 34, small_alone=JobRun(34, 60.0, 8.0, 16), big_alone=JobRun(343, 200.0, 8.0, 16, (16,)),
                small_together=84.0, big_together=224.4, timeline=_timeline(), slots=16),
    ]  # fmt: skip
    written = plots.draw_sections(sections, tmp_path)
    assert sorted(p.name for p in written) == ["makespan.png", "two_jobs.png"]
    assert all(p.stat().st_size > 10_000 and p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in written)


def test_a_jobs_mean_invocation_is_kept_per_job_and_survives_the_results_file() -> None:
    timeline = _timeline()
    timeline.invocation_seconds = {"big": [16.0, 20.0], "small": [18.0]}
    assert timeline.mean_invocation_seconds("big") == pytest.approx(18.0)
    assert timeline.mean_invocation_seconds("gone") is None
    assert Timeline.from_dict(timeline.as_dict()) == timeline
    older = {k: v for k, v in timeline.as_dict().items() if k != "invocation_seconds"}
    assert Timeline.from_dict(older).invocation_seconds == {}
