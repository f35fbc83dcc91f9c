"""The settings each command needs, in one registry, checked before the command does anything.

Every command of ``outreach`` has an entry in ``NEEDS`` under its path (``campaign schedule``): the
``Targets`` fields it always needs, those it needs unless ``--dry-run`` (``to_change``), those one
value of its ``which`` argument needs (``by_choice``) and those it needs once given the tasks table it
may do without (``with_tasks_table``). ``enforce`` walks click's own command tree, so a
command added later is found by itself: it refuses a tree with a command the registry does not name
(or an entry no command has), and wraps each command's callback so that a setting missing ends the
command before it reads a file or calls AWS, with exit 2 and the flag to pass (``TargetError``).
A setting only some of a command's inputs need (the unsubscribe key of a campaign without its own
link, ``--function`` or the root's output) stays with the code that knows when, as a ``require``.

The core reads its settings from the process environment, as it does in Lambda (``outreach.config``;
``targets.CORE_VARIABLES`` says which flag sets each). A ``ConfigurationError`` that still escapes a
command (one path the registry does not cover) is mapped by ``missing_setting`` to exit 2 naming that
flag: a safety net, not the check.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

import click

from outreach.errors import ConfigurationError
from outreach_operator.cli.output import session
from outreach_operator.cli.targets import CORE_VARIABLES, NOT_FLAGS, TargetError, Targets


@dataclass(frozen=True)
class Needs:
    """What one command needs (``Targets`` field names)."""

    always: tuple[str, ...] = ()
    # Needed unless the command runs with --dry-run.
    to_change: tuple[str, ...] = ()
    # Needed when the command's ``which`` argument has this value.
    by_choice: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # Needed when the tasks table, which the command reads only if it is given, is given.
    with_tasks_table: tuple[str, ...] = ()

    def of(self, params: Mapping[str, Any], targets: Targets) -> tuple[str, ...]:
        """The fields needed by a run with these parameter values, pointed at ``targets``."""
        needed = [*self.always]
        if targets.tasks_table:
            needed.extend(self.with_tasks_table)
        if not params.get("dry_run"):
            needed.extend(self.to_change)
        choice = params.get("which")
        if isinstance(choice, str):
            needed.extend(self.by_choice.get(choice, ()))
        return tuple(dict.fromkeys(needed))

    def every(self) -> tuple[str, ...]:
        """Every field any run of the command may be asked for here."""
        chosen = [name for names in self.by_choice.values() for name in names]
        return tuple(dict.fromkeys([*self.always, *self.to_change, *chosen, *self.with_tasks_table]))


_TASKS = ("tasks_table", "open_index_shards")
_SCHEDULES = ("email_schedule_group", "email_worker_arn", "email_scheduler_role_arn", "email_dlq_arn")

NEEDS: Mapping[str, Needs] = {
    "campaign cancel": Needs(_TASKS, to_change=("email_schedule_group",)),
    "campaign check": Needs(),
    # A dry run sizes each planned task's row (its open-tasks shard among it) without the table.
    "campaign schedule": Needs(("open_index_shards",), to_change=("tasks_table", *_SCHEDULES)),
    "campaign status": Needs(_TASKS),
    "contacts block": Needs(("contacts_table", *_TASKS), to_change=("email_schedule_group",)),
    "contacts export": Needs(("contacts_table",)),
    "contacts import": Needs(("contacts_table", *_TASKS), to_change=("email_schedule_group",)),
    # With the tasks table it lists the open emails (a domain's from the open-tasks index).
    "contacts show": Needs(("contacts_table",), with_tasks_table=("open_index_shards",)),
    "contacts unblock": Needs(("contacts_table",)),
    "data erase": Needs(("tasks_table", "results_bucket")),
    "dlq redrive": Needs(
        by_choice={
            "scrape": ("scrape_dlq_url", "scrape_queue_url"),
            "ses-events": ("ses_events_dlq_url", "ses_events_queue_url"),
        }
    ),
    "dlq replay": Needs(
        by_choice={
            "pipe": ("pipe_dlq_url", "scrape_queue_url", *_TASKS),
            "reconciler": ("reconciler_dlq_url",),
        }
    ),
    "dlq show": Needs(("scrape_dlq_url",)),
    "failures list": Needs(("failure_bucket",)),
    "failures replay": Needs(("failure_bucket", "scrape_queue_url", "tasks_table")),
    "job cancel": Needs(_TASKS),
    "job create": Needs(("tasks_table",), to_change=("open_index_shards",)),
    "job export": Needs(("results_bucket",)),
    "job list": Needs(("tasks_table",)),
    "job status": Needs(("tasks_table",)),
    # The scraper's function comes from --function or the root's output: its own code asks for it.
    "scraper pause": Needs(),
    "scraper resume": Needs(),
    "scraper status": Needs(),
    # The configuration set comes from --configuration-set or the root's output, likewise.
    "sending pause": Needs(),
    "sending resume": Needs(),
    "sending status": Needs(),
    "task requeue": Needs(_TASKS),
    "task show": Needs(("tasks_table",)),
}


class RegistryError(RuntimeError):
    """The command tree and ``NEEDS`` disagree: a command without an entry, or an entry without one."""


def commands(group: click.Group, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, click.Command]]:
    """Every command (not group) under ``group``, by its path (``campaign schedule``)."""
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield from commands(command, (*prefix, name))
        else:
            yield " ".join((*prefix, name)), command


def flags_of(root: click.Group) -> dict[str, str]:
    """Each ``Targets`` field the root's options set, with the flag that sets it (``--table``)."""
    names = {f.name for f in fields(Targets)} - NOT_FLAGS
    return {str(p.name): p.opts[0] for p in root.params if isinstance(p, click.Option) and p.name in names}


def missing(targets: Targets, needed: tuple[str, ...], flags: Mapping[str, str]) -> TargetError | None:
    """The error naming each needed field ``targets`` lacks and its flag, or ``None``."""
    absent = [name for name in needed if not getattr(targets, name)]
    if not absent:
        return None
    where = f"environment {targets.env!r} has no such output" if targets.env else "no --env given"
    named = ", ".join(name.replace("_", " ") for name in absent)
    return TargetError(f"{named} unknown ({where}): pass {' and '.join(flags[n] for n in absent)}")


def _checked(callback: Callable[..., Any], needs: Needs, flags: Mapping[str, str]) -> Callable[..., Any]:
    @functools.wraps(callback)
    def checked(*args: Any, **kwargs: Any) -> Any:
        ctx = click.get_current_context()
        targets = session(ctx).targets
        error = missing(targets, needs.of(ctx.params, targets), flags)
        if error is not None:
            raise error
        return callback(*args, **kwargs)

    checked.needs = needs  # type: ignore[attr-defined]
    return checked


def enforce(root: click.Group, registry: Mapping[str, Needs] = NEEDS) -> None:
    """Check each command of ``root`` against ``registry`` and make it check its settings first."""
    found = dict(commands(root))
    flags = flags_of(root)
    unnamed = sorted(set(found) - set(registry))
    stale = sorted(set(registry) - set(found))
    unknown = sorted({n for needs in registry.values() for n in needs.every()} - set(flags))
    if unnamed or stale or unknown:
        raise RegistryError(
            f"settings.NEEDS: commands without an entry {unnamed}, entries without a command {stale}, "
            f"settings no option of {root.name} sets {unknown}"
        )
    for path, command in found.items():
        if command.callback is not None and not hasattr(command.callback, "needs"):
            command.callback = _checked(command.callback, registry[path], flags)


def missing_setting(error: ConfigurationError, root: click.Group) -> TargetError:
    """A core setting that was not there, as the flag that sets it (exit 2)."""
    flags = flags_of(root)
    for variable, name in CORE_VARIABLES.items():
        if re.search(rf"\b{variable}\b", str(error)):
            return TargetError(f"{error}: pass {flags[name]} (or --env)")
    return TargetError(f"{error} (a setting of the core no flag sets: report it)")
