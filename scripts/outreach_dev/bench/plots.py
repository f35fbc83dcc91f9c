"""The bench's pictures: the makespan job and the two-job run as busy slots and queue depth over time.

Each picture has two panels over virtual time: busy scraper slots per job (retries marked where
they started) and messages waiting in the scrape queue per job, one line per job. They are drawn
from the timelines the sections recorded (``timeline``) with matplotlib's Agg backend (no display),
a development dependency only. ``make bench`` writes them beside ``bench/results.json``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from outreach_dev.bench.report import Section
from outreach_dev.bench.timeline import Timeline

# (section name, where its timeline is in the details, file name, title)
PICTURES = (
    ("makespan", ("ours", "timeline"), "makespan.png", "makespan job"),
    ("two jobs", ("timeline",), "two_jobs.png", "two jobs: a small job started while a big one runs"),
)


def draw(timeline: Timeline, title: str, path: Path) -> Path:
    """One picture of ``timeline`` written to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, (busy_axis, queue_axis) = pyplot.subplots(2, 1, sharex=True, figsize=(10, 6))
    try:
        for job in sorted(timeline.busy):
            (line,) = busy_axis.step(timeline.times, timeline.busy[job], where="post", label=job)
            starts = timeline.retries.get(job, [])
            if starts:
                busy_axis.plot(
                    starts, [0] * len(starts), "|", color=line.get_color(), markersize=12,
                    label=f"{job}: retries ({len(starts)})",
                )  # fmt: skip
        for job in sorted(timeline.queued):
            queue_axis.plot(timeline.times, timeline.queued[job], label=job)
        busy_axis.set_ylabel("busy scraper slots")
        queue_axis.set_ylabel("messages queued")
        queue_axis.set_xlabel(f"virtual seconds (sampled every {timeline.interval:g} s)")
        busy_axis.set_title(title)
        busy_axis.legend(loc="upper right", fontsize="small")
        queue_axis.legend(loc="upper right", fontsize="small")
        figure.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(path, dpi=100)
    finally:
        pyplot.close(figure)
    return path


def _timeline(details: dict[str, Any], keys: tuple[str, ...]) -> Timeline | None:
    value: Any = details
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return Timeline.from_dict(value) if isinstance(value, dict) else None


def draw_sections(sections: list[Section], directory: Path) -> list[Path]:
    """Every picture whose section measured a timeline, written into ``directory``."""
    written = []
    by_name: dict[str, Section] = {}
    for measured in sections:
        if measured.error is None:
            by_name.setdefault(measured.name, measured)  # the first makespan job: the 1,000 sites
    for name, keys, file_name, title in PICTURES:
        section = by_name.get(name)
        timeline = _timeline(section.as_dict()["details"], keys) if section is not None else None
        if timeline is not None and timeline.times:
            written.append(draw(timeline, title, directory / file_name))
    return written


def drawing_works(directory: Path) -> Path:
    """Draw a tiny two-job timeline into ``directory`` (the smoke run's check that drawing works)."""
    timeline = Timeline(interval=1.0)
    for second, (big, small) in enumerate(((2, 0), (1, 1), (1, 1), (0, 0))):
        timeline.add(float(second), {"big": big, "small": small}, {"big": 2 - second // 2, "small": 0})
    timeline.retries["big"] = [1.5]
    return draw(timeline, "drawing check", directory / "two_jobs.png")
