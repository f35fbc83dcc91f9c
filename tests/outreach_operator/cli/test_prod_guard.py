"""``--env``: the credentials and region are the root's before anything is read; prod changes ask first."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from click.testing import CliRunner, Result

from outreach import clients, clock, contacts, task_store
from outreach.task_ids import normalise_url, scrape_task_id
from outreach_dev import terraform_cli
from outreach_operator.cli import confirm
from outreach_operator.cli.account import root_pins
from outreach_operator.cli.app import cli
from tests.outreach_operator.cli.conftest import OPERATOR, aws_state, fail_task
from tests.outreach_operator.cli.ledger_support import ledger_items, record_address_stop
from tests.support.aws import REGION, Resources

MOTO_ACCOUNT = "123456789012"
URLS = ["https://a.example", "https://b.example"]
IDS = [scrape_task_id("jp", normalise_url(u)) for u in URLS]

_PROVIDER = """\
provider "aws" {
  region              = var.region
  allowed_account_ids = var.allowed_account_ids
}
"""
_VARIABLES = """\
variable "region" {
  type = string
}

variable "allowed_account_ids" {
  type    = list(string)
  default = null
}
"""


def write_root(directory: Path, *, region: str = REGION, allowed: list[str] | None = None) -> Path:
    """An environment root as terraform/environments has them: provider block, variables, tfvars."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "versions.tf").write_text("terraform {}\n")
    (directory / "main.tf").write_text(_PROVIDER)
    (directory / "variables.tf").write_text(_VARIABLES)
    (directory / "terraform.tfvars").write_text(f'region = "{region}"\n')
    if allowed is not None:
        (directory / f"{directory.name}.auto.tfvars").write_text(
            f"allowed_account_ids = {json.dumps(allowed)}\n"
        )
    return directory


@pytest.fixture
def environments(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """terraform/environments in a scratch directory, so each test writes the roots it needs."""
    directory = tmp_path / "environments"
    directory.mkdir()
    monkeypatch.setattr(terraform_cli, "ENVIRONMENTS_DIR", directory)
    return directory


def _pipe_dlq() -> str:
    return str(
        boto3.client("sqs", region_name=REGION).create_queue(QueueName="outreach-p-pipe-dlq")["QueueUrl"]
    )


@pytest.fixture
def state(resources: Resources, contacts_table: str, tmp_path: Path) -> Callable[..., Path]:
    """A state file whose outputs name the moto resources (``account``: the one its ARNs name)."""

    def write(account: str = MOTO_ACCOUNT) -> Path:
        failure_bucket = "outreach-p-failures"
        boto3.client("s3", region_name=REGION).create_bucket(
            Bucket=failure_bucket, CreateBucketConfiguration={"LocationConstraint": REGION}
        )
        pipeline = {
            "tasks_table_name": resources.table,
            "tasks_table_arn": f"arn:aws:dynamodb:{REGION}:{account}:table/{resources.table}",
            "scrape_queue_url": resources.queue_url,
            "scrape_dlq_url": resources.dlq_url,
            "results_bucket": resources.bucket,
            "dispatch_failure_bucket": failure_bucket,
            "dispatch_pipe_dlq_url": _pipe_dlq(),
            "contacts_table_name": contacts_table,
        }
        outputs = {"pipeline": {"value": pipeline}, "email_schedule_group": {"value": "outreach-p-email"}}
        path = tmp_path / "terraform.tfstate"
        path.write_text(json.dumps({"version": 4, "outputs": outputs}))
        return path

    return write


def invoke(env: str, state_file: Path, *args: str, input: str | None = None, **environ: str | None) -> Result:
    return CliRunner().invoke(
        cli,
        ["--env", env, "--state", str(state_file), *args],
        env={"OUTREACH_OPERATOR": OPERATOR, **environ},
        input=input,
    )


@pytest.fixture
def services(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The services the core's clients were created for during the test (the task store's reads)."""
    created: list[str] = []
    original = clients._client

    def recording(service: str) -> Any:
        created.append(service)
        return original(service)

    monkeypatch.setattr(clients, "_client", recording)
    clients.reset()
    yield created


def test_credentials_of_an_account_the_root_does_not_allow_are_refused_before_anything_is_read(
    environments: Path, state: Callable[..., Path], services: list[str]
) -> None:
    # GIVEN prod pinned to account 111122223333 (allowed_account_ids in its prod.auto.tfvars) and a
    # job that a status would read
    write_root(environments / "prod", allowed=["111122223333"])
    task_store.create_scrape_job("jp", URLS)
    state_file = state()
    services.clear()
    # WHEN a command runs with credentials of the embedded AWS's account
    result = invoke("prod", state_file, "job", "status", "jp")
    # THEN it is refused (exit 2) naming both accounts, and the table was never read
    assert result.exit_code == 2, result.output
    assert MOTO_ACCOUNT in result.stderr and "111122223333" in result.stderr
    assert "allowed_account_ids" in result.stderr
    assert services == []


@pytest.mark.parametrize("env", ["local", "dev"])
def test_a_root_without_allowed_account_ids_pins_the_account_its_outputs_name(
    env: str, environments: Path, state: Callable[..., Path]
) -> None:
    # GIVEN a root that pins no account, applied (its outputs' ARNs say) in account 999999999999
    write_root(environments / env)
    task_store.create_scrape_job("jp", URLS)
    # WHEN a command runs with credentials of the embedded AWS's account
    result = invoke(env, state(account="999999999999"), "job", "status", "jp")
    # THEN it is refused (exit 2): those are not the environment's credentials
    assert result.exit_code == 2, result.output
    assert "999999999999" in result.stderr and "Terraform outputs" in result.stderr


def test_a_session_in_another_region_than_the_roots_is_refused(
    environments: Path, state: Callable[..., Path], services: list[str]
) -> None:
    write_root(environments / "prod", allowed=[MOTO_ACCOUNT])
    task_store.create_scrape_job("jp", URLS)
    state_file = state()
    services.clear()
    result = invoke("prod", state_file, "--region", "us-east-1", "job", "status", "jp")
    assert result.exit_code == 2, result.output
    assert f"--region {REGION}" in result.stderr
    assert services == []


def test_a_session_without_a_region_takes_the_roots_and_the_pinned_account_passes(
    environments: Path, state: Callable[..., Path]
) -> None:
    write_root(environments / "prod", allowed=[MOTO_ACCOUNT])
    task_store.create_scrape_job("jp", URLS)
    result = invoke(
        "prod", state(), "--json", "job", "status", "jp", AWS_DEFAULT_REGION=None, AWS_REGION=None
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["counts"]["Pending"] == 2


def _dead_letters(resources: Resources, state_file: Path) -> None:
    """Something for each change to act on: a scrape DLQ message, a pipe dead letter, a failure record."""
    pipeline = json.loads(state_file.read_text())["outputs"]["pipeline"]["value"]
    sqs = boto3.client("sqs", region_name=REGION)
    sqs.send_message(QueueUrl=resources.dlq_url, MessageBody=json.dumps({"task_id": IDS[1]}))
    info = {
        "shardId": "shardId-1",
        "startSequenceNumber": "1",
        "endSequenceNumber": "1",
        "approximateArrivalOfFirstRecord": clock.iso(),
        "approximateArrivalOfLastRecord": clock.iso(),
    }
    sqs.send_message(
        QueueUrl=pipeline["dispatch_pipe_dlq_url"], MessageBody=json.dumps({"DDBStreamBatchInfo": info})
    )
    boto3.client("s3", region_name=REGION).put_object(
        Bucket=pipeline["dispatch_failure_bucket"],
        Key="aws/lambda/uuid/shardId-1/2026/12/01/r",
        Body=json.dumps({"DDBStreamBatchInfo": info, "payload": json.dumps({"Records": []})}),
    )


CHANGES = {
    "task requeue": ["task", "requeue", IDS[0], "--reason", "site is back"],
    "job cancel": ["job", "cancel", "jp"],
    "dlq redrive": ["dlq", "redrive", "scrape"],
    "dlq replay pipe": ["dlq", "replay", "pipe", "--job", "jp"],
    "failures replay": ["failures", "replay"],
    "contacts block": ["contacts", "block", "info@acme.example", "--why", "asked"],
    "contacts block --domain": ["contacts", "block", "--domain", "acme.example", "--why", "asked"],
    "contacts unblock": ["contacts", "unblock", "old@acme.example", "--why", "fixed"],
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_change_against_prod_without_a_terminal_or_yes_is_refused_and_changes_nothing(
    change: str, environments: Path, state: Callable[..., Path], resources: Resources
) -> None:
    # GIVEN prod (the right account) with a Failed task, a Pending one and a dead letter of each kind
    write_root(environments / "prod", allowed=[MOTO_ACCOUNT])
    task_store.create_scrape_job("jp", URLS)
    fail_task(IDS[0], "http_status: 503")
    state_file = state()
    _dead_letters(resources, state_file)
    record_address_stop("old@acme.example", contacts.State.BLOCKED, contacts.Source.OPERATOR)
    pipeline = json.loads(state_file.read_text())["outputs"]["pipeline"]["value"]
    before = aws_state(
        resources, queues=[pipeline["dispatch_pipe_dlq_url"]], buckets=[pipeline["dispatch_failure_bucket"]]
    )
    ledger = ledger_items()
    # WHEN the change runs from a script (no terminal) without --yes
    result = invoke("prod", state_file, *CHANGES[change])
    # THEN it is refused (exit 2), says to pass --yes, and nothing changed anywhere
    assert result.exit_code == 2, result.output
    assert "--yes" in result.stderr
    after = aws_state(
        resources, queues=[pipeline["dispatch_pipe_dlq_url"]], buckets=[pipeline["dispatch_failure_bucket"]]
    )
    assert after == before
    assert ledger_items() == ledger


def test_a_change_against_prod_asks_and_goes_ahead_only_on_yes(
    environments: Path, state: Callable[..., Path], resources: Resources, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_root(environments / "prod", allowed=[MOTO_ACCOUNT])
    task_store.create_scrape_job("jp", URLS)
    fail_task(IDS[0], "http_status: 503")
    fail_task(IDS[1], "http_status: 503")
    state_file = state()
    requeue = ["--json", "task", "requeue", "--reason", "site is back"]
    # an operator at a terminal: asked on stderr, with the account and region
    monkeypatch.setattr(confirm, "interactive", lambda: True)
    before = aws_state(resources)
    declined = invoke("prod", state_file, *requeue, IDS[0], input="n\n")
    assert declined.exit_code == 1, declined.output
    assert f"account {MOTO_ACCOUNT}, region {REGION}" in declined.stderr
    assert aws_state(resources) == before
    accepted = invoke("prod", state_file, *requeue, IDS[0], input="y\n")
    assert accepted.exit_code == 0, accepted.output
    assert json.loads(accepted.stdout)["requeued"] == [IDS[0]]
    # a script with --yes: not asked
    monkeypatch.setattr(confirm, "interactive", lambda: False)
    scripted = invoke("prod", state_file, "--yes", *requeue, IDS[1])
    assert scripted.exit_code == 0, scripted.output
    assert json.loads(scripted.stdout)["requeued"] == [IDS[1]]


def test_the_pins_are_the_provider_block_with_its_variables_resolved_as_terraform_does(
    tmp_path: Path,
) -> None:
    # the committed roots: their provider's region, from terraform.tfvars or the variable's default
    for env in ("dev", "prod", "local"):
        assert root_pins(env, Path(terraform_cli.REPO) / "terraform" / "environments" / env).region == REGION
    # precedence: default < TF_VAR_ < terraform.tfvars < *.auto.tfvars in lexical order
    root = write_root(tmp_path / "prod", region="eu-west-1")
    environ = {"TF_VAR_allowed_account_ids": '["000000000001"]', "TF_VAR_region": "us-east-2"}
    assert root_pins("prod", root, environ=environ).region == "eu-west-1"
    assert root_pins("prod", root, environ=environ).accounts == ("000000000001",)
    (root / "a.auto.tfvars").write_text('allowed_account_ids = ["000000000002"]\n')
    (root / "b.auto.tfvars.json").write_text(json.dumps({"allowed_account_ids": ["000000000003"]}))
    pins = root_pins("prod", root, environ=environ, output_accounts=("000000000009",))
    assert (pins.accounts, pins.accounts_from) == (("000000000003",), "allowed_account_ids")
