"""Where ``outreach`` points: an environment's Terraform outputs, overridden by explicit flags."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from outreach_operator.cli.app import cli, main
from outreach_operator.cli.targets import TargetError, resolve

PIPELINE = {
    "tasks_table_name": "dev-tasks",
    "scrape_queue_url": "https://sqs/dev-scrape",
    "scrape_dlq_url": "https://sqs/dev-scrape-dlq",
    "results_bucket": "dev-results",
    "dispatch_failure_bucket": "dev-failures",
    "dispatch_pipe_dlq_url": None,
}


def _outputs(pipeline: Mapping[str, Any] | None) -> Any:
    def read(env: str, state: Path | None) -> Mapping[str, Any]:
        return {} if pipeline is None else {"pipeline": pipeline, "alarm_topic_arn": "arn:sns"}

    return read


def test_an_environment_gives_every_name_its_outputs_hold() -> None:
    targets = resolve("dev", {}, read_outputs=_outputs(PIPELINE))
    assert (targets.tasks_table, targets.scrape_queue_url, targets.failure_bucket) == (
        "dev-tasks",
        "https://sqs/dev-scrape",
        "dev-failures",
    )
    assert targets.pipe_dlq_url is None


def test_explicit_flags_override_the_environment_outputs() -> None:
    targets = resolve(
        "dev", {"tasks_table": "other-tasks", "scrape_queue_url": None}, read_outputs=_outputs(PIPELINE)
    )
    assert (targets.tasks_table, targets.scrape_queue_url) == ("other-tasks", "https://sqs/dev-scrape")


def test_an_unapplied_environment_says_what_to_run() -> None:
    with pytest.raises(TargetError, match=r"make plan ENV=dev.*make apply ENV=dev"):
        resolve("dev", {}, read_outputs=_outputs(None))


def test_a_command_needing_a_name_nobody_gave_is_bad_input() -> None:
    result = CliRunner().invoke(cli, ["job", "status", "j1"])
    assert result.exit_code == 2
    assert "pass --table" in result.stderr


def test_an_environment_root_that_was_never_initialised_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # the prod root of a fresh checkout: no backend initialised, so `terraform output` fails
    code = main(["--env", "prod", "job", "list"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1
    assert "make plan ENV=prod" in err


def test_exit_code_of_an_unknown_command_is_bad_input() -> None:
    assert main(["job", "frobnicate"]) == 2


def test_a_state_file_applied_elsewhere_gives_the_names_its_outputs_recorded(tmp_path: Path) -> None:
    state = tmp_path / "terraform.tfstate"
    state.write_text(
        json.dumps({"version": 4, "outputs": {"pipeline": {"value": PIPELINE, "type": "object"}}})
    )
    targets = resolve("local", {}, state=state)
    assert (targets.tasks_table, targets.results_bucket) == ("dev-tasks", "dev-results")
    with pytest.raises(TargetError, match="make local"):
        resolve("local", {}, state=tmp_path / "missing.tfstate")


def test_the_reconcilers_a_replay_may_invoke_come_from_the_pipeline_outputs() -> None:
    # the names the roots' pipeline output has today; an ARN output, once a root has it, wins
    pipeline = {
        **PIPELINE,
        "tasks_table_arn": "arn:aws:dynamodb:eu-central-1:111122223333:table/dev-tasks",
        "scrape_reconciler_function_name": "outreach-dev-scrape-reconciler",
        "email_reconciler_function_name": "outreach-dev-email-reconciler",
    }
    targets = resolve("dev", {}, read_outputs=_outputs(pipeline))
    assert (targets.scrape_reconciler_function, targets.email_reconciler_function) == (
        "outreach-dev-scrape-reconciler",
        "outreach-dev-email-reconciler",
    )
    assert targets.output_accounts == ("111122223333",)
    arn = "arn:aws:lambda:eu-central-1:111122223333:function:outreach-dev-scrape-reconciler"
    with_arn = resolve("dev", {}, read_outputs=_outputs({**pipeline, "scrape_reconciler_function_arn": arn}))
    assert with_arn.scrape_reconciler_function == arn


def test_the_contact_ledger_and_the_unsubscribe_endpoint_come_from_the_pipeline_outputs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pipeline = {
        **PIPELINE,
        "contacts_table_name": "dev-contacts",
        "unsubscribe_url": "https://abc.lambda-url.eu-central-1.on.aws/",
        "unsubscribe_key_arn": "arn:aws:kms:eu-central-1:123456789012:key/k",
    }
    targets = resolve("dev", {}, read_outputs=_outputs(pipeline))
    assert (targets.contacts_table, targets.unsubscribe_url, targets.unsubscribe_key_arn) == (
        "dev-contacts",
        "https://abc.lambda-url.eu-central-1.on.aws/",
        "arn:aws:kms:eu-central-1:123456789012:key/k",
    )
    flagged = resolve("dev", {"contacts_table": "other-contacts"}, read_outputs=_outputs(pipeline))
    assert flagged.contacts_table == "other-contacts"
    for exported in ("TASKS_TABLE", "SCRAPE_QUEUE_URL", "SCRAPE_DLQ_URL", "RESULTS_BUCKET", "CONTACTS_TABLE"):
        monkeypatch.delenv(exported, raising=False)  # restored after the test
    flagged.activate()  # the core's contacts module reads CONTACTS_TABLE, as in Lambda
    assert os.environ["CONTACTS_TABLE"] == "other-contacts"


def test_the_warmup_ramp_comes_from_the_email_output_in_the_workers_form() -> None:
    def read(env: str, state: Path | None) -> Mapping[str, Any]:
        return {"pipeline": PIPELINE, "email_warmup": {"start_date": "2027-03-01", "daily_caps": [50.0, 100]}}

    targets = resolve("dev", {}, read_outputs=read)
    assert (targets.email_warmup_start_date, targets.email_warmup_daily_caps) == ("2027-03-01", "50,100")

    def established(env: str, state: Path | None) -> Mapping[str, Any]:
        return {"pipeline": PIPELINE, "email_warmup": {"start_date": None, "daily_caps": [50]}}

    assert resolve("dev", {}, read_outputs=established).email_warmup_start_date == "none"
    assert resolve("dev", {}, read_outputs=_outputs(PIPELINE)).email_warmup_daily_caps is None


def test_the_open_tasks_shard_count_comes_from_the_pipeline_output_and_reaches_the_task_store(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from outreach import config

    targets = resolve("dev", {}, read_outputs=_outputs({**PIPELINE, "open_index_shards": 12}))
    assert targets.open_index_shards == "12"
    monkeypatch.delenv("OPEN_INDEX_SHARDS", raising=False)  # restored after the test
    targets.activate()
    assert config.open_index_shards() == 12
    flagged = resolve(
        "dev", {"open_index_shards": "3"}, read_outputs=_outputs({**PIPELINE, "open_index_shards": 12})
    )
    assert flagged.open_index_shards == "3"
