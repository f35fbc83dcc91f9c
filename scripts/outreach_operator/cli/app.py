"""The ``outreach`` command: global options (where it points, how it prints) and its command groups.

outreach --env dev job create --file sites.csv
outreach --table T --queue-url U --endpoint-url http://127.0.0.1:4566 dlq show scrape

With ``--env``, the credentials' account and the session's region are checked against the root's
before any command runs (``account.check_caller``; exit 2 if they are not the environment's), and a
change against prod asks first unless ``--yes`` (``confirm.confirm_change``). Each command then checks
that every setting it needs was given (``settings``): one missing is named with its flag (exit 2).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import click
from botocore.exceptions import BotoCoreError, ClientError

from outreach.errors import ConfigurationError
from outreach.task_model import MAX_OPEN_INDEX_SHARDS
from outreach_operator.cli import (
    campaigns,
    contacts,
    data,
    dlq,
    failures,
    jobs,
    scraper,
    sending,
    settings,
    tasks,
)
from outreach_operator.cli.account import check_caller, pins_of
from outreach_operator.cli.output import Session
from outreach_operator.cli.targets import resolve


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--env", type=click.Choice(["dev", "prod", "local"]), help="Read resource names from this root."
)
@click.option(
    "--state", type=click.Path(path_type=Path, dir_okay=False), help="Terraform state (--env local)."
)
@click.option("--table", "tasks_table", help="Tasks table name.")
@click.option(
    "--open-index-shards",
    envvar="OPEN_INDEX_SHARDS",
    type=click.IntRange(1, MAX_OPEN_INDEX_SHARDS),
    callback=lambda _ctx, _param, value: None if value is None else str(value),
    help="Shards of the tasks table's open-tasks index key (modules/tasks-table's open_index_shards).",
)
@click.option("--queue-url", "scrape_queue_url", help="Scrape queue URL.")
@click.option("--dlq-url", "scrape_dlq_url", help="Scrape DLQ URL.")
@click.option("--results-bucket", help="Results bucket.")
@click.option("--failure-bucket", help="Bucket of the stream mapping's failure records.")
@click.option("--pipe-dlq-url", help="Dispatch pipe DLQ URL.")
@click.option("--reconciler-dlq-url", help="Reconciler DLQ URL.")
@click.option("--email-schedule-group", help="EventBridge Scheduler group of the email schedules.")
@click.option("--email-worker-arn", help="Email worker function ARN (the schedules' target).")
@click.option("--email-scheduler-role-arn", help="Role the schedules assume to invoke the worker.")
@click.option("--email-dlq-arn", help="Email DLQ ARN (the schedules' dead-letter queue).")
@click.option("--email-sender-identity", help="SES identity (domain or address) campaigns send from.")
@click.option("--email-configuration-set", help="SES configuration set every campaign email is sent with.")
@click.option(
    "--email-warmup-start-date", help="The sending identity's warm-up start: none or a UTC date YYYY-MM-DD."
)
@click.option(
    "--email-warmup-daily-caps", help="The warm-up ramp's daily caps, comma-separated (50,50,100,...)."
)
@click.option(
    "--reputation-stop-alarms",
    help="Reputation stop alarms (comma-separated): at ALARM the guard pauses sending.",
)
@click.option(
    "--scrape-reconciler-function", help="Scrape reconciler (name or ARN): a function dlq replay may invoke."
)
@click.option(
    "--email-reconciler-function", help="Email reconciler (name or ARN): a function dlq replay may invoke."
)
@click.option("--contacts-table", help="Contact ledger table name (stops: unsubscribes, bounces, blocks).")
@click.option("--unsubscribe-url", help="One-click unsubscribe endpoint (the function URL).")
@click.option("--unsubscribe-key-arn", help="KMS HMAC key the unsubscribe tokens are made with.")
@click.option("--ses-events-queue-url", help="Queue of SES's events (and unsubscribe fan-outs).")
@click.option("--ses-events-dlq-url", help="DLQ of the SES events queue.")
@click.option("--endpoint-url", envvar="AWS_ENDPOINT_URL", help="AWS endpoint (the embedded AWS).")
@click.option("--region", envvar="AWS_DEFAULT_REGION", help="AWS region.")
@click.option("--json", "as_json", is_flag=True, help="Print exact JSON instead of tables.")
@click.option("--yes", is_flag=True, help="Make changes against --env prod without asking (scripts, CI).")
@click.pass_context
def cli(
    ctx: click.Context,
    /,
    env: str | None,
    state: Path | None,
    as_json: bool,
    yes: bool,
    **overrides: str | None,
) -> None:
    """Create and watch scrape jobs and email campaigns, and handle what lands in the dead-letter places."""
    targets = resolve(env, overrides, state=state)
    targets.activate()
    session = Session(targets=targets, as_json=as_json, yes=yes)
    pins = pins_of(session)
    if pins is not None:
        check_caller(session, pins)
    ctx.obj = session


cli.add_command(jobs.job)
cli.add_command(tasks.task)
cli.add_command(dlq.dlq)
cli.add_command(failures.failures)
cli.add_command(scraper.scraper)
cli.add_command(campaigns.campaign)
cli.add_command(contacts.contacts)
cli.add_command(data.data)
cli.add_command(sending.sending)
# Each command checks the settings it needs before anything else (settings.NEEDS names them all).
settings.enforce(cli)


def main(argv: Sequence[str] | None = None) -> int:
    """Console-script entry point: returns the exit code (0 done, 1 failed, 2 bad input, 3 a stop only
    the recipient can lift; ``output``)."""
    try:
        cli.main(args=list(argv) if argv is not None else None, prog_name="outreach", standalone_mode=False)
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except ConfigurationError as exc:
        # A core setting no check of settings.NEEDS caught: still the flag to pass, exit 2.
        error = settings.missing_setting(exc, cli)
        error.show()
        return error.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except (ClientError, BotoCoreError) as exc:
        click.echo(f"Error: AWS refused or could not be reached: {exc}", err=True)
        return 1
    except click.Abort:
        click.echo("aborted", err=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
