"""The scenario rows' AWS operations recorded by the test run itself, while it runs their unit tests.

``make test`` runs every scenario row's unit tests anyway; recording them there, instead of in a
child pytest that runs them a second time (``tests/iam/recording.py``), saves that second run. The
recording is used only when it is the child's equal: the run collected every scenario file whole
(nothing deselected, no test named inside one), and every one of those tests ran in this process
before the evidence was asked for, each passing or skipped. Otherwise the evidence falls back to
the child run.

The plugin is registered by ``tests/conftest.py`` in every run. It wraps the core's client factory
when the run configures, before any test imports a handler (as the child's ``-p`` plugin does), and
records only during a scenario test's setup, call and teardown. Under pytest-xdist the scenario
tests join the evidence's worker group, so they run, in collection order, on the worker that then
builds the evidence (``group``); pytest collects ``tests/functions`` before ``tests/iam``.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.iam.recording import RecordingFailed
from tests.iam.scenarios import FunctionScenarios
from tests.support import aws_operation_recorder, worker_groups

NAME = "iam-session-recording"
EVIDENCE_FIXTURE = "evidence"
_OUTCOMES_THAT_COUNT = ("passed", "skipped")


class SessionRecording:
    def __init__(self, rows: Sequence[FunctionScenarios], repo: Path) -> None:
        self.paths = tuple(repo / test.split("::")[0] for row in rows for test in row.tests)
        self.handlers = frozenset(row.handler_module for row in rows)
        self.recorder: aws_operation_recorder._Recorder | None = None
        self.expected: frozenset[str] = frozenset()
        self.collected_paths: set[Path] = set()
        self.narrowed: list[str] = []
        self.outcomes: dict[str, list[str]] = {}
        self.finished: set[str] = set()

    def is_scenario(self, path: Path) -> bool:
        return any(path == p or p in path.parents for p in self.paths)

    def group(self, items: Iterable[pytest.Item]) -> None:
        """Put the scenario tests in the evidence's worker group (before ``worker_groups.assign``)."""
        for item in items:
            if self.is_scenario(item.path) and item.get_closest_marker("xdist_group") is None:
                item.add_marker(pytest.mark.xdist_group(worker_groups.session_group(EVIDENCE_FIXTURE)))

    def pytest_configure(self, config: pytest.Config) -> None:
        if config.pluginmanager.has_plugin(aws_operation_recorder.__name__):
            return  # the child run: its own plugin records
        self.recorder = aws_operation_recorder.install(self.handlers)
        self.recorder.active = False
        for argument in config.args:
            if "::" in argument and self.is_scenario(Path(argument.split("::")[0]).resolve()):
                self.narrowed.append(argument)

    def pytest_deselected(self, items: Sequence[pytest.Item]) -> None:
        self.narrowed.extend(item.nodeid for item in items if self.is_scenario(item.path))

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        scenario_items = [item for item in session.items if self.is_scenario(item.path)]
        self.expected = frozenset(item.nodeid for item in scenario_items)
        self.collected_paths = {
            p for item in scenario_items for p in self.paths if p == item.path or p in item.path.parents
        }

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, object, object]:
        recorder = self.recorder if item.nodeid in self.expected else None
        if recorder is not None:
            recorder.active = True
        try:
            return (yield)
        finally:
            if recorder is not None:
                recorder.active = False

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.nodeid in self.expected:
            self.outcomes.setdefault(report.nodeid, []).append(report.outcome)
            if report.when == "teardown":
                self.finished.add(report.nodeid)

    def why_not_complete(self) -> str | None:
        """None when this run's recording equals the child's; else why it does not."""
        if self.recorder is None:
            return "this run is the recording child"
        if self.narrowed:
            return f"the run did not hold every scenario test ({self.narrowed[0]} deselected or named alone)"
        uncollected = [p for p in self.paths if p not in self.collected_paths]
        if uncollected:
            return f"the run did not collect {uncollected[0]}"
        missing = sorted(self.expected - self.finished)
        if missing:
            return f"{len(missing)} scenario tests did not run here before the evidence (e.g. {missing[0]})"
        return None

    def records(self) -> list[dict[str, Any]]:
        """The recording once complete (``why_not_complete() is None``); RecordingFailed if a test failed."""
        assert self.recorder is not None and self.why_not_complete() is None
        failed = sorted(
            nodeid
            for nodeid, outcomes in self.outcomes.items()
            if any(outcome not in _OUTCOMES_THAT_COUNT for outcome in outcomes)
        )
        if failed:
            raise RecordingFailed(f"{len(failed)} scenario unit tests failed, e.g. {failed[0]}")
        return self.recorder.sorted_records()
