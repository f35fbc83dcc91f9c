"""Tests sharing a fixture built once per scope run on one xdist worker (tests/support/worker_groups.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support import worker_groups

pytest_plugins = ("pytester",)

CONFTEST = """
import pytest
from tests.support.worker_groups import assign

@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    assign(items)

@pytest.fixture(scope="session")
def evidence():
    return "built once"

@pytest.fixture(scope="session")
def endpoint():
    return "cheap"
"""
STACK_CONFTEST = """
import pytest

@pytest.fixture(scope="package")
def stack():
    return "one stack"
"""
SUITE = {
    "test_applied.py": """
import pytest

@pytest.fixture(scope="module")
def applied():
    return "one apply"

def test_one(applied): pass
def test_two(applied): pass
def test_alone(): pass
""",
    "test_evidence.py": "def test_reads(evidence): pass\n",
    "test_cheap.py": "def test_uses(endpoint): pass\n",
    "stack/__init__.py": "",
    "stack/conftest.py": STACK_CONFTEST,
    "stack/test_first.py": "def test_first(stack): pass\n",
    "stack/test_second.py": "def test_second(stack): pass\ndef test_without_it(): pass\n",
}


def write_suite(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    for name, text in SUITE.items():
        path = pytester.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def groups(pytester: pytest.Pytester) -> dict[str, str | None]:
    write_suite(pytester)
    items, _ = pytester.inline_genitems("-p", "no:cacheprovider")
    found: dict[str, str | None] = {}
    for item in items:
        mark = item.get_closest_marker("xdist_group")
        found[item.nodeid] = mark.args[0] if mark else None
    return found


def test_tests_sharing_a_module_package_or_costly_session_fixture_share_a_group_and_others_go_alone(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worker_groups, "SHARED_SESSION_FIXTURES", frozenset({"evidence"}))
    monkeypatch.setattr(worker_groups, "PER_WORKER_SESSION_FIXTURES", frozenset({"endpoint"}))
    found = groups(pytester)
    assert found == {
        "test_applied.py::test_one": "test_applied.py",
        "test_applied.py::test_two": "test_applied.py",
        "test_applied.py::test_alone": None,
        "test_cheap.py::test_uses": None,
        "test_evidence.py::test_reads": "session:evidence",
        "stack/test_first.py::test_first": "stack",
        "stack/test_second.py::test_second": "stack",
        "stack/test_second.py::test_without_it": None,
    }


def test_a_session_fixture_in_neither_set_fails_the_collection(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worker_groups, "SHARED_SESSION_FIXTURES", frozenset())
    monkeypatch.setattr(worker_groups, "PER_WORKER_SESSION_FIXTURES", frozenset({"endpoint"}))
    write_suite(pytester)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*session fixture 'evidence' (used by test_evidence.py::test_reads)*"])


# A child pytest run with three workers, each importing the project's conftest: a minute on a quiet
# machine, several beside other test workers and a loaded machine.
@pytest.mark.timeout(900)
def test_under_loadgroup_the_tests_of_one_group_run_on_one_worker_and_the_others_spread(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN the project's collection hook, a module of four tests sharing a module fixture and four alone
    repo = Path(__file__).resolve().parents[1]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(str(repo / p) for p in ("", "functions", "scripts")))
    pytester.makeconftest("from tests.conftest import pytest_collection_modifyitems  # noqa: F401\n")
    pytester.makepyfile(
        test_shared="""
import os, pytest

@pytest.fixture(scope="module")
def applied():
    return os.environ["PYTEST_XDIST_WORKER"]

@pytest.mark.parametrize("n", range(4))
def test_shared(applied, n):
    assert applied == os.environ["PYTEST_XDIST_WORKER"]
""",
        test_alone="""
import os, time, pytest

@pytest.mark.parametrize("n", range(4))
def test_alone(n):
    time.sleep(0.2)
""",
    )
    # WHEN they run on three workers with --dist loadgroup
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "3", "--dist", "loadgroup", "-v")
    # THEN all pass, the four sharing the fixture on one worker, under ids naming their group
    result.assert_outcomes(passed=8)
    shared = [line for line in result.outlines if "PASSED test_shared.py" in line]
    assert len(shared) == 4
    assert len({line.split()[0] for line in shared}) == 1
    assert all(line.rstrip().endswith("@test_shared.py") for line in shared)
