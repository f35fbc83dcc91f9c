"""Where the command line points: resource names from an environment's Terraform outputs, or flags.

``--env dev|prod|local`` reads ``terraform output -json`` of ``terraform/environments/<env>`` through
the project's Terraform driver; every explicit flag (``--table``, ``--queue-url``, ...) overrides the
value it names. ``--endpoint-url`` (or ``AWS_ENDPOINT_URL``, which boto3 reads itself) reaches the
embedded AWS. The core's task store reads its table from ``TASKS_TABLE``, as it does in Lambda, so the
resolved names are exported to the process environment before any command touches AWS.

The reconcilers' names (or ARNs, once a root outputs them) are the only functions ``dlq replay
reconciler`` may invoke; ``output_accounts`` (the accounts the outputs' ARNs name) is where the
environment was applied, which ``account.check_caller`` holds the credentials to when the root's
``allowed_account_ids`` is unset.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import click
from python_terraform import IsFlagged

from outreach import clients
from outreach_dev import terraform_cli
from outreach_dev import terraform_outputs as root_outputs


class TargetError(click.ClickException):
    """The command cannot tell where to point: the message says what to run or pass (exit 2)."""

    exit_code = 2


@dataclass(frozen=True)
class Targets:
    """The resources a command may touch; ``None`` where neither Terraform nor a flag named one."""

    tasks_table: str | None = None
    # Shards of the open-tasks and campaign-open keys: job and campaign creation and every open-task
    # query use it.
    open_index_shards: str | None = None
    scrape_queue_url: str | None = None
    scrape_dlq_url: str | None = None
    results_bucket: str | None = None
    failure_bucket: str | None = None
    pipe_dlq_url: str | None = None
    reconciler_dlq_url: str | None = None
    scraper_function: str | None = None
    dispatcher_function: str | None = None
    # The reconcilers (name or ARN): the only functions ``dlq replay reconciler`` invokes.
    scrape_reconciler_function: str | None = None
    email_reconciler_function: str | None = None
    email_schedule_group: str | None = None
    email_worker_arn: str | None = None
    email_scheduler_role_arn: str | None = None
    email_dlq_arn: str | None = None
    email_sender_identity: str | None = None
    email_configuration_set: str | None = None
    # The sending identity's warm-up ramp as the worker gets it (modules/email's ``warmup`` output):
    # ``none`` or the start date, and the daily caps comma-separated (``outreach.warmup_ramp``).
    email_warmup_start_date: str | None = None
    email_warmup_daily_caps: str | None = None
    # The reputation stop alarms (comma-separated names): in ALARM, the sending guard paused sending.
    reputation_stop_alarms: str | None = None
    # The contact ledger (``outreach.contacts`` reads it from CONTACTS_TABLE).
    contacts_table: str | None = None
    # The one-click unsubscribe endpoint (a function URL) and the KMS HMAC key its tokens are made with:
    # a campaign without an ``unsubscribe`` of its own links every email there.
    unsubscribe_url: str | None = None
    unsubscribe_key_arn: str | None = None
    # The queue of SES's events (and the unsubscribe endpoint's fan-out messages) and its DLQ.
    ses_events_queue_url: str | None = None
    ses_events_dlq_url: str | None = None
    endpoint_url: str | None = None
    region: str | None = None
    env: str | None = None
    # Accounts the ARNs among the environment's outputs name (where it was applied); no flag sets it.
    output_accounts: tuple[str, ...] = ()

    def require(self, name: str, flag: str) -> str:
        value = getattr(self, name)
        if not value:
            where = f"environment {self.env!r} has no such output" if self.env else "no --env given"
            raise TargetError(f"{name.replace('_', ' ')} unknown ({where}): pass {flag}")
        return str(value)

    def activate(self) -> None:
        """Point the core (task store, results) and every boto3 client at these resources."""
        exported = {**CORE_VARIABLES, "AWS_ENDPOINT_URL": "endpoint_url", "AWS_DEFAULT_REGION": "region"}
        for variable, name in exported.items():
            value = getattr(self, name)
            if value:
                os.environ[variable] = value
        clients.reset()


# The core's settings a command may reach (``outreach.config`` reads each from this environment
# variable, as in Lambda) -> the Targets field that is exported as it.
CORE_VARIABLES: Mapping[str, str] = {
    "TASKS_TABLE": "tasks_table",
    "OPEN_INDEX_SHARDS": "open_index_shards",
    "SCRAPE_QUEUE_URL": "scrape_queue_url",
    "SCRAPE_DLQ_URL": "scrape_dlq_url",
    "RESULTS_BUCKET": "results_bucket",
    "CONTACTS_TABLE": "contacts_table",
}

# Terraform output (inside the ``pipeline`` map) -> Targets field.
_PIPELINE_OUTPUTS: Mapping[str, str] = {
    "tasks_table_name": "tasks_table",
    "open_index_shards": "open_index_shards",
    "scrape_queue_url": "scrape_queue_url",
    "scrape_dlq_url": "scrape_dlq_url",
    "results_bucket": "results_bucket",
    "dispatch_failure_bucket": "failure_bucket",
    "dispatch_pipe_dlq_url": "pipe_dlq_url",
    "scrape_reconciler_dlq_url": "reconciler_dlq_url",
    "scraper_function_name": "scraper_function",
    "dispatcher_function_name": "dispatcher_function",
    "scrape_reconciler_function_name": "scrape_reconciler_function",
    "email_reconciler_function_name": "email_reconciler_function",
    "contacts_table_name": "contacts_table",
    "unsubscribe_url": "unsubscribe_url",
    "unsubscribe_key_arn": "unsubscribe_key_arn",
    "ses_events_queue_url": "ses_events_queue_url",
    "ses_events_dlq_url": "ses_events_dlq_url",
    "email_configuration_set": "email_configuration_set",
}

# Pipeline outputs preferred, when a root has them, over the name of the same function above: an ARN
# pins the function's account and region as well as its name.
_PREFERRED_PIPELINE_OUTPUTS: Mapping[str, str] = {
    "scrape_reconciler_function_arn": "scrape_reconciler_function",
    "email_reconciler_function_arn": "email_reconciler_function",
}

# Top-level outputs of a root (the email module's) -> Targets field.
_ROOT_OUTPUTS: Mapping[str, str] = {
    "email_schedule_group": "email_schedule_group",
    "email_worker_arn": "email_worker_arn",
    "email_scheduler_role_arn": "email_scheduler_role_arn",
    "email_dlq_arn": "email_dlq_arn",
    "email_sender_identity": "email_sender_identity",
    "email_reputation_stop_alarms": "reputation_stop_alarms",
}

OutputReader = Callable[[str, Path | None], Mapping[str, Any]]

# Targets fields no flag overrides: what the environment is, and where its outputs say it was applied.
NOT_FLAGS = frozenset({"env", "output_accounts"})

_ARN_ACCOUNT = re.compile(r"^arn:[\w-]+:[\w-]+:[\w-]*:(\d{12}):")


def accounts_in(value: Any) -> tuple[str, ...]:
    """The account ids of every ARN among ``value`` (outputs, maps and lists of them), sorted."""
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            match = _ARN_ACCOUNT.match(item)
            if match:
                found.add(match.group(1))
        elif isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return tuple(sorted(found))


def _apply_hint(env: str) -> str:
    if env == "local":
        return "run `make local` and pass the state it applied with --state"
    return f"run `make plan ENV={env}` and `make apply ENV={env}` first"


def _first_error(text: str) -> str:
    """The line of terraform's output that says what is wrong (its ``Error:`` line), else the first."""
    lines = [line.strip(" │╷╵") for line in text.splitlines() if line.strip(" │╷╵")]
    for line in lines:
        if line.startswith("Error:"):
            return line.removeprefix("Error:").strip().rstrip(".")
    return lines[0].rstrip(":") if lines else "terraform output failed"


def terraform_outputs(env: str, state: Path | None = None) -> Mapping[str, Any]:
    """The root's outputs as {name: value} (``terraform_outputs``): ``terraform output -json`` of the
    environment root, or, for a state file applied elsewhere (``make local`` applies a copy in a
    scratch directory), the outputs recorded in that state."""
    directory = terraform_cli.environment_dir(env)
    if state is not None:
        try:
            return root_outputs.from_state(json.loads(state.read_text()))
        except (OSError, json.JSONDecodeError) as exc:
            raise terraform_cli.TerraformError(f"Error: cannot read outputs from {state}: {exc}") from exc
    result = terraform_cli.run(directory, "output", json=IsFlagged, no_color=IsFlagged)
    return root_outputs.from_json(result.stdout)


def _warmup(output: Any) -> dict[str, str]:
    """The ``email_warmup`` output ({start_date, daily_caps}) in the worker's settings' form."""
    if not isinstance(output, Mapping) or not isinstance(output.get("daily_caps"), list):
        return {}
    start = output.get("start_date")
    return {
        "email_warmup_start_date": str(start) if start else "none",
        "email_warmup_daily_caps": ",".join(str(int(cap)) for cap in output["daily_caps"]),
    }


def from_outputs(env: str, outputs: Mapping[str, Any]) -> Targets:
    pipeline = outputs.get("pipeline")
    if not isinstance(pipeline, Mapping) or not pipeline:
        raise TargetError(f"environment {env!r} is not applied (no pipeline output): {_apply_hint(env)}")
    values = {field: pipeline.get(output) for output, field in _PIPELINE_OUTPUTS.items()}
    # A root may expose an output at its top level (one added after the pipeline map, for example).
    for output, field in _PIPELINE_OUTPUTS.items():
        if values[field] is None and isinstance(outputs.get(output), str):
            values[field] = outputs[output]
    for output, field in _PREFERRED_PIPELINE_OUTPUTS.items():
        preferred = pipeline.get(output) or outputs.get(output)
        if isinstance(preferred, str) and preferred:
            values[field] = preferred
    for output, field in _ROOT_OUTPUTS.items():
        if isinstance(outputs.get(output), str):
            values[field] = outputs[output]
    values.update(_warmup(outputs.get("email_warmup")))
    chosen = {k: str(v) for k, v in values.items() if v}
    return Targets(env=env, output_accounts=accounts_in(dict(outputs)), **chosen)


def resolve(
    env: str | None,
    overrides: Mapping[str, str | None],
    *,
    state: Path | None = None,
    read_outputs: OutputReader = terraform_outputs,
) -> Targets:
    """Targets from ``env``'s outputs (if given) with every non-empty override applied on top."""
    base = Targets()
    if env is not None:
        try:
            outputs = read_outputs(env, state)
        except terraform_cli.TerraformError as exc:
            raise TargetError(f"{_first_error(str(exc))}: {_apply_hint(env)}") from exc
        base = from_outputs(env, outputs)
    known = {f.name for f in fields(Targets)} - NOT_FLAGS
    chosen: dict[str, Any] = {name: value for name, value in overrides.items() if value and name in known}
    unknown = sorted(name for name in overrides if name not in known)
    if unknown:
        raise ValueError(f"unknown target fields {unknown}")
    return replace(base, **chosen)
