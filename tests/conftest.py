"""Shared fixtures: moto-backed AWS resources and the environment Terraform would set."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

# Powertools reads these when the handlers' modules are imported, before any fixture runs.
os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "outreach-test")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "OutreachTest")
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "1")

import pytest
from moto import mock_aws

from outreach import clients
from outreach_dev import function_env
from tests.iam import scenarios, session_recording
from tests.support import botocore_models, cpu_accounting, gc_thresholds, moto_transactions, worker_groups
from tests.support.aws import REGION, Resources, create_resources
from tests.support.email import SENDER_DOMAIN
from tests.support.lambda_context import FakeContext

# Planning and creating tasks writes each to an ``open-tasks`` shard; the command line exports the
# count from the pipeline's output (``Targets``), tests take the module's default, as Terraform sets it.
os.environ.setdefault("OPEN_INDEX_SHARDS", function_env.settings("scrape_reconciler")["OPEN_INDEX_SHARDS"])

# Every function's settings, as Terraform sets them with the modules' defaults. The reconcilers
# read the same variable names: the email reconciler's values are set here, and the scrape
# reconciler's tests set that function's own (``function_env.settings("scrape_reconciler")``).
FUNCTIONS_IN_TESTS = ("scrape_reconciler", "dispatcher", "scraper", "email_worker", "email_reconciler")


def pytest_addoption(parser: pytest.Parser) -> None:
    cpu_accounting.add_option(parser)


def pytest_configure(config: pytest.Config) -> None:
    """The IAM evidence's recording of the handlers' unit tests, made as this run runs them; with
    ``--cpu-summary``, each test's CPU (tests/support/cpu_accounting.py); the collector's thresholds
    (tests/support/gc_thresholds.py); the botocore sessions' shared service models
    (tests/support/botocore_models.py); moto's transactions copying each table once
    (tests/support/moto_transactions.py)."""
    gc_thresholds.configure()
    moto_transactions.install()
    botocore_models.install()
    plugin = session_recording.SessionRecording(scenarios.FUNCTIONS, Path(__file__).resolve().parents[1])
    config.pluginmanager.register(plugin, session_recording.NAME)  # its pytest_configure runs now
    cpu_accounting.configure(config)


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> Iterator[None]:
    """Tests sharing a scoped fixture run on one xdist worker (tests/support/worker_groups.py): marked
    before pytest-xdist's own hook reads the marks, labelled after it (``worker_groups.label``). The
    handlers' unit tests join the IAM evidence's group (tests/iam/session_recording.py)."""
    recording = config.pluginmanager.get_plugin(session_recording.NAME)
    if isinstance(recording, session_recording.SessionRecording):
        recording.group(items)
    worker_groups.assign(items)
    yield
    if config.getoption("loadgroup", False):  # set on each xdist worker under --dist loadgroup
        worker_groups.label(items)


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "outreach-test")
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "OutreachTest")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "1")


@pytest.fixture
def resources(aws_env: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[Resources]:
    with mock_aws():
        clients.reset()
        created = create_resources()
        for name, value in function_env.all_settings(*FUNCTIONS_IN_TESTS).items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("TASKS_TABLE", created.table)
        monkeypatch.setenv("SCRAPE_QUEUE_URL", created.queue_url)
        monkeypatch.setenv("SCRAPE_DLQ_URL", created.dlq_url)
        monkeypatch.setenv("RESULTS_BUCKET", created.bucket)
        # The sending identity's domain (modules/email's sender_identity): a name, not a setting.
        monkeypatch.setenv("SENDING_DOMAIN", SENDER_DOMAIN)
        yield created
        clients.reset()


@pytest.fixture
def lambda_context() -> FakeContext:
    return FakeContext()
