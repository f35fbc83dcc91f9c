"""Every command, walked from click's own tree, with each setting it needs missing: exit 2 naming the flag.

A new command is walked by itself: it needs an entry in ``settings.NEEDS`` (``enforce`` refuses the
tree otherwise) and sample arguments here (``SAMPLES``), or these tests fail. Each run has none of the
core's settings in its environment (``outreach.config`` reads them there, as in Lambda), so a command
that reaches one it was not given would end in a ``ConfigurationError``, which click's runner shows
as the exception (the console entry's mapping, ``settings.missing_setting``, is tested on its own).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from outreach import config
from outreach.errors import ConfigurationError
from outreach_dev import function_env
from outreach_operator.cli import settings
from outreach_operator.cli.app import cli, main
from outreach_operator.cli.targets import CORE_VARIABLES, Targets
from tests.outreach_operator.cli.campaign_support import CAMPAIGN, GROUP, RECIPIENTS, START
from tests.support.aws import REGION, Resources

ACCOUNT = "123456789012"
COMMANDS = dict(settings.commands(cli))

# Arguments each command parses with (without and, where it has one, with --dry-run); {tmp} is a
# scratch directory holding sites.csv and block.csv.
SAMPLES: Mapping[str, list[list[str]]] = {
    "campaign cancel": [["spring-outreach-2027"], ["spring-outreach-2027", "--dry-run"]],
    "campaign check": [[str(CAMPAIGN)]],
    "campaign schedule": [
        ["--campaign", str(CAMPAIGN), "--recipients", str(RECIPIENTS), "--start", START],
        ["--campaign", str(CAMPAIGN), "--recipients", str(RECIPIENTS), "--start", START, "--dry-run"],
    ],
    "campaign status": [["spring-outreach-2027"]],
    "contacts block": [["a@example.org", "--why", "asked"], ["a@example.org", "--why", "asked", "--dry-run"]],
    "contacts export": [["--out", "{tmp}/contacts.csv"]],
    "contacts import": [["--file", "{tmp}/block.csv"], ["--file", "{tmp}/block.csv", "--dry-run"]],
    "contacts show": [["a@example.org"], ["--domain", "example.org"]],
    "contacts unblock": [["a@example.org", "--why", "asked"], ["a@example.org", "--why", "x", "--dry-run"]],
    "data erase": [["--job", "job-1"], ["--job", "job-1", "--dry-run"]],
    "dlq redrive": [["scrape", "--dry-run"], ["ses-events", "--dry-run"]],
    "dlq replay": [["pipe", "--dry-run"], ["reconciler", "--dry-run"]],
    "dlq show": [["scrape"]],
    "failures list": [[]],
    "failures replay": [["--dry-run"]],
    "job cancel": [["job-1"], ["job-1", "--dry-run"]],
    "job create": [["--file", "{tmp}/sites.csv"], ["--file", "{tmp}/sites.csv", "--dry-run"]],
    "job export": [["job-1", "--out", "{tmp}/results.jsonl"]],
    "job list": [[]],
    "job status": [["job-1"]],
    "scraper pause": [["--dry-run"]],
    "scraper resume": [["--dry-run"]],
    "scraper status": [[]],
    "sending pause": [["--dry-run"]],
    "sending resume": [["--dry-run"]],
    "sending status": [[]],
    "task requeue": [["job-1#0", "--reason", "retry"], ["job-1#0", "--reason", "retry", "--dry-run"]],
    "task show": [["job-1#0"]],
}

# Every variable a function reads (the module defaults' names) and the core's command-line settings:
# none is in a run's environment, so only what a command's flags set reaches the core.
UNSET = {name: None for name in {*function_env.all_settings(), *CORE_VARIABLES, "SENDING_DOMAIN"}}


def flag_values(resources: Resources, contacts_table: str) -> dict[str, str]:
    """A value for every target the root's options set, pointing at the moto resources."""
    arn = f"arn:aws:lambda:{REGION}:{ACCOUNT}"
    return {
        "tasks_table": resources.table,
        "open_index_shards": function_env.settings("scrape_reconciler")["OPEN_INDEX_SHARDS"],
        "scrape_queue_url": resources.queue_url,
        "scrape_dlq_url": resources.dlq_url,
        "results_bucket": resources.bucket,
        "failure_bucket": resources.bucket,
        "pipe_dlq_url": resources.dlq_url,
        "reconciler_dlq_url": resources.dlq_url,
        "email_schedule_group": GROUP,
        "email_worker_arn": f"{arn}:function:outreach-test-email-worker",
        "email_scheduler_role_arn": f"arn:aws:iam::{ACCOUNT}:role/outreach-test-scheduler",
        "email_dlq_arn": f"arn:aws:sqs:{REGION}:{ACCOUNT}:outreach-test-email-dlq",
        "email_sender_identity": "example.com",
        "email_configuration_set": "outreach-test",
        "email_warmup_start_date": "none",
        "email_warmup_daily_caps": "50,100",
        "reputation_stop_alarms": "outreach-test-bounces",
        "scrape_reconciler_function": f"{arn}:function:outreach-test-scrape-reconciler",
        "email_reconciler_function": f"{arn}:function:outreach-test-email-reconciler",
        "contacts_table": contacts_table,
        "unsubscribe_url": "https://unsubscribe.example.com/",
        "unsubscribe_key_arn": f"arn:aws:kms:{REGION}:{ACCOUNT}:key/00000000-0000-0000-0000-000000000000",
        "ses_events_queue_url": resources.dlq_url,
        "ses_events_dlq_url": resources.dlq_url,
        "region": REGION,
    }


Invoke = Callable[[str, list[str], str | None], Result]


@pytest.fixture
def invoke(resources: Resources, contacts_table: str, tmp_path: Path) -> Invoke:
    """``invoke(path, args, left_out)``: the command with every target flag but ``left_out``'s."""
    (tmp_path / "sites.csv").write_text("url\nhttps://example.org/\n", encoding="utf-8")
    (tmp_path / "block.csv").write_text("email\nb@example.org\n", encoding="utf-8")
    values = flag_values(resources, contacts_table)
    flags = settings.flags_of(cli)
    assert set(values) == set(flags) - {"endpoint_url"}, "give every target flag a value here"

    def run(path: str, args: list[str], left_out: str | None) -> Result:
        given = [part for name, value in values.items() if name != left_out for part in (flags[name], value)]
        argv = [*given, *path.split(), *(arg.format(tmp=tmp_path) for arg in args)]
        return CliRunner().invoke(cli, argv, env={**UNSET, "OUTREACH_OPERATOR": "ops@example.test"})

    return run


# What every run here points at, unless its test leaves one target out.
GIVEN = Targets(tasks_table="given")


def needed(path: str, args: list[str], targets: Targets = GIVEN) -> tuple[str, ...]:
    """What the registry says a run of ``path`` with ``args`` needs (the args parsed by click), given
    ``targets`` (by default: the tasks table, as every run here has it unless it is left out)."""
    command = COMMANDS[path]
    with command.make_context(path, [a.format(tmp="/tmp") for a in args], resilient_parsing=True) as ctx:
        return settings.NEEDS[path].of(ctx.params, targets)


def test_every_command_has_an_entry_and_samples() -> None:
    assert sorted(COMMANDS) == sorted(settings.NEEDS) == sorted(SAMPLES)


def test_a_command_the_registry_does_not_name_is_refused() -> None:
    @click.group()
    @click.option("--table", "tasks_table")
    def root(tasks_table: str | None) -> None:
        """A tree with one command more than the registry."""

    @root.command("new")
    def new() -> None:
        """A command added without an entry."""

    with pytest.raises(settings.RegistryError, match=r"without an entry \['new'\]"):
        settings.enforce(root, {})
    with pytest.raises(settings.RegistryError, match=r"entries without a command \['gone'\]"):
        settings.enforce(root, {"new": settings.Needs(), "gone": settings.Needs()})


@pytest.mark.parametrize("path", sorted(p for p, n in settings.NEEDS.items() if n.every()))
def test_each_missing_setting_exits_2_naming_its_flag(path: str, invoke: Invoke) -> None:
    flags = settings.flags_of(cli)
    wrong = []
    for args in SAMPLES[path]:
        for name in needed(path, args):
            result = invoke(path, args, name)
            clean = result.exit_code == 2 and isinstance(result.exception, SystemExit)
            if not clean or flags[name] not in result.output or "Traceback" in result.output:
                wrong.append((args, name, result.exit_code, repr(result.exception), result.output[-300:]))
    assert not wrong


@pytest.mark.parametrize("path", sorted(SAMPLES))
def test_no_command_reaches_a_core_setting_it_was_not_given(path: str, invoke: Invoke) -> None:
    """A core setting the registry does not ask of a run, left out: the command never gets as far as
    the core asking for it (it runs, or stops on something else)."""
    reached = []
    for args in SAMPLES[path]:
        for name in sorted(set(CORE_VARIABLES.values()) - set(needed(path, args))):
            result = invoke(path, args, name)
            if isinstance(result.exception, ConfigurationError):
                reached.append((args, name, str(result.exception)))
    assert not reached


def test_a_new_users_dry_run_schedule_names_the_shards_flag(
    resources: Resources, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's run: no --env, no --open-index-shards (nor its variable): exit 2, no traceback."""
    monkeypatch.delenv("OPEN_INDEX_SHARDS", raising=False)
    schedule = ["campaign", "schedule", "--campaign", str(CAMPAIGN), "--recipients", str(RECIPIENTS)]
    code = main([*schedule, "--start", START, "--dry-run"])
    err = capsys.readouterr().err
    assert code == 2
    assert "pass --open-index-shards" in err
    assert "Traceback" not in err


def test_a_core_setting_that_escapes_the_registry_exits_2_naming_its_flag(
    resources: Resources, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def not_set() -> str:
        raise ConfigurationError("environment variable TASKS_TABLE is required")

    monkeypatch.setattr(config, "tasks_table", not_set)
    code = main(["--table", resources.table, "task", "show", "job-1#0"])
    assert code == 2
    assert "TASKS_TABLE is required: pass --table" in capsys.readouterr().err


def test_a_malformed_shard_count_is_refused_at_its_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--open-index-shards", "many", "job", "list"]) == 2
    assert "--open-index-shards" in capsys.readouterr().err
