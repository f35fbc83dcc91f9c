"""The ``outreach contacts`` group: each subcommand's arguments and options, its work in its own module."""

from __future__ import annotations

from pathlib import Path

import click

from outreach_operator.cli.contacts.block import block_contact
from outreach_operator.cli.contacts.export import export_contacts
from outreach_operator.cli.contacts.importing import import_contacts
from outreach_operator.cli.contacts.show import show_contact
from outreach_operator.cli.contacts.unblock import unblock_contact
from outreach_operator.cli.output import session

_DOMAIN = click.option("--domain", help="A whole domain instead of one ADDRESS (example.org).")
_OPERATOR = click.option("--operator", help="Who acts (default: OUTREACH_OPERATOR or the AWS identity).")


@click.group()
def contacts() -> None:
    """The contact ledger: who may not be mailed (unsubscribed, bounced, complained, blocked) and why."""


@contacts.command("show")
@click.argument("address", required=False)
@_DOMAIN
@click.pass_context
def show(ctx: click.Context, address: str | None, domain: str | None) -> None:
    """The ledger's record of ADDRESS (and of its domain), whether it is stopped, and its open emails."""
    show_contact(session(ctx), address, domain)


@contacts.command("block")
@click.argument("address", required=False)
@_DOMAIN
@click.option("--why", required=True, help="Why (kept with the record, at most 500 characters).")
@_OPERATOR
@click.option(
    "--dry-run", is_flag=True, help="Show the record and the emails it would cancel; change nothing."
)
@click.pass_context
def block(
    ctx: click.Context, address: str | None, domain: str | None, why: str, operator: str | None, dry_run: bool
) -> None:
    """Record ADDRESS (or --domain) as blocked and cancel its open emails in every campaign."""
    block_contact(session(ctx), address, domain, why, operator, dry_run)


@contacts.command("unblock")
@click.argument("address", required=False)
@_DOMAIN
@click.option("--why", required=True, help="Why (kept with the record, at most 500 characters).")
@_OPERATOR
@click.option("--dry-run", is_flag=True, help="Say what would be lowered; change nothing.")
@click.pass_context
def unblock(
    ctx: click.Context, address: str | None, domain: str | None, why: str, operator: str | None, dry_run: bool
) -> None:
    """Lower a blocked or bounced ADDRESS (or --domain) to ok. An unsubscribe or a complaint is never
    lifted (exit 3)."""
    unblock_contact(session(ctx), address, domain, why, operator, dry_run)


@contacts.command("import")
@click.option("--file", "path", required=True, type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option("--why", help="Why, for rows without a why column (default: the file's name).")
@click.option("--skip-invalid", is_flag=True, help="Block the valid rows and list the bad ones.")
@_OPERATOR
@click.option("--dry-run", is_flag=True, help="Check every row and count what would change; change nothing.")
@click.pass_context
def import_file(
    ctx: click.Context, path: Path, why: str | None, skip_invalid: bool, operator: str | None, dry_run: bool
) -> None:
    """Block every address and domain of a do-not-contact CSV (a header with an email or domain column)."""
    import_contacts(session(ctx), path, why, skip_invalid, operator, dry_run)


@contacts.command("export")
@click.option("--out", "out_path", required=True, type=click.Path(path_type=Path, dir_okay=False))
@click.option("--all", "everyone", is_flag=True, help="Every record, also the ok ones (default: stops only).")
@click.option("--force", is_flag=True, help="Overwrite OUT if it exists.")
@click.pass_context
def export(ctx: click.Context, out_path: Path, everyone: bool, force: bool) -> None:
    """Write the ledger's records to a CSV file (a cell a spreadsheet would evaluate gets a leading ');
    the file reads back with ``contacts import``."""
    export_contacts(session(ctx), out_path, everyone, force)
