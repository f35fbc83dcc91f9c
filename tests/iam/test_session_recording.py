"""The IAM evidence takes the run's own recording only when it equals the child run's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from outreach import clients
from tests.iam.recording import RecordingFailed
from tests.iam.scenarios import FunctionScenarios
from tests.iam.session_recording import SessionRecording
from tests.support import worker_groups

ROWS = (
    FunctionScenarios("outreach-prod-a", "handler_a", ("tests/functions/test_a.py",)),
    FunctionScenarios("outreach-prod-b", "handler_b", ("tests/functions/b",)),
)


class _PluginManager:
    def has_plugin(self, name: str) -> bool:
        return False


def _config(*args: str) -> Any:
    return SimpleNamespace(args=list(args), pluginmanager=_PluginManager())


def _item(repo: Path, path: str, name: str) -> Any:
    item = SimpleNamespace(path=repo / path, nodeid=f"{path}::{name}", marks=[])
    item.get_closest_marker = lambda marker: next((m for m in item.marks if m.name == marker), None)
    item.add_marker = item.marks.append
    return item


def _report(item: Any, when: str, outcome: str = "passed") -> Any:
    return SimpleNamespace(nodeid=item.nodeid, when=when, outcome=outcome)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setattr(clients, "_client", clients._client)  # the recorder wraps it: restored after
    yield tmp_path
    clients.reset()


@pytest.fixture
def items(repo: Path) -> list[Any]:
    return [
        _item(repo, "tests/functions/test_a.py", "test_one"),
        _item(repo, "tests/functions/b/test_b.py", "test_two"),
        _item(repo, "tests/functions/test_other.py", "test_three"),
    ]


def _collected(repo: Path, items: list[Any], *args: str) -> SessionRecording:
    recording = SessionRecording(ROWS, repo)
    recording.pytest_configure(_config(*args))
    session: Any = SimpleNamespace(items=items)
    recording.pytest_collection_finish(session)
    return recording


def _run(recording: SessionRecording, item: Any, outcome: str = "passed") -> None:
    protocol = recording.pytest_runtest_protocol(item)
    next(protocol)
    for when in ("setup", "call", "teardown"):
        recording.pytest_runtest_logreport(_report(item, when, outcome if when == "call" else "passed"))
    with pytest.raises(StopIteration):
        protocol.send(None)


def test_a_run_that_ran_every_scenario_test_whole_gives_its_own_recording(
    repo: Path, items: list[Any]
) -> None:
    recording = _collected(repo, items)
    for item in items:
        _run(recording, item)
    assert recording.why_not_complete() is None
    assert recording.records() == []


def test_the_scenario_tests_join_the_evidences_worker_group_and_no_other_test_does(
    repo: Path, items: list[Any]
) -> None:
    SessionRecording(ROWS, repo).group(items)
    groups = [[m.args[0] for m in item.marks] for item in items]
    assert groups == [[worker_groups.session_group("evidence")]] * 2 + [[]]


def test_a_scenario_test_not_yet_run_in_this_process_sends_the_evidence_to_the_child(
    repo: Path, items: list[Any]
) -> None:
    recording = _collected(repo, items)
    _run(recording, items[0])
    assert "did not run here" in str(recording.why_not_complete())


def test_a_deselected_scenario_test_sends_the_evidence_to_the_child(repo: Path, items: list[Any]) -> None:
    recording = _collected(repo, items[1:])
    recording.pytest_deselected([items[0]])
    for item in items[1:]:
        _run(recording, item)
    assert "deselected" in str(recording.why_not_complete())


def test_a_scenario_test_named_alone_sends_the_evidence_to_the_child(repo: Path, items: list[Any]) -> None:
    recording = _collected(repo, items, str(repo / "tests/functions/test_a.py::test_one"))
    for item in items:
        _run(recording, item)
    assert "named alone" in str(recording.why_not_complete())


def test_a_scenario_file_not_collected_sends_the_evidence_to_the_child(repo: Path, items: list[Any]) -> None:
    recording = _collected(repo, items[1:])
    for item in items[1:]:
        _run(recording, item)
    assert "did not collect" in str(recording.why_not_complete())


def test_a_failed_scenario_test_fails_the_recording(repo: Path, items: list[Any]) -> None:
    recording = _collected(repo, items)
    _run(recording, items[0], outcome="failed")
    _run(recording, items[1])
    with pytest.raises(RecordingFailed, match=r"test_a\.py::test_one"):
        recording.records()


def test_only_the_handlers_calls_inside_a_scenario_test_are_recorded(repo: Path, items: list[Any]) -> None:
    recording = _collected(repo, items)
    recorder = recording.recorder
    assert recorder is not None
    model = SimpleNamespace(name="GetItem", service_model=SimpleNamespace(signing_name="dynamodb"))

    def handler_a_call() -> None:  # a frame whose module is the handler's
        exec(
            "record(params, model)",
            {
                "__name__": "handler_a",
                "record": recorder.record,
                "params": {"TableName": "t", "Key": {}},
                "model": model,
            },
        )

    handler_a_call()  # outside any test
    protocol = recording.pytest_runtest_protocol(items[2])  # a test that is no scenario's
    next(protocol)
    handler_a_call()
    with pytest.raises(StopIteration):
        protocol.send(None)
    protocol = recording.pytest_runtest_protocol(items[0])
    next(protocol)
    handler_a_call()
    with pytest.raises(StopIteration):
        protocol.send(None)
    for item in items:
        for when in ("setup", "call", "teardown"):
            recording.pytest_runtest_logreport(_report(item, when))
    assert [(r["handler"], r["operation"]) for r in recording.records()] == [("handler_a", "GetItem")]
