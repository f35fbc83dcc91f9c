"""A second look before a change against prod: ``confirm_change(session, what)``.

Every command that changes something (requeue, redrive, replay, cancel, schedule) calls it after it
has worked out what it will do and before its first write; a dry run does not. Against ``--env prod``
it asks on the terminal (stderr, so ``--json`` stays parseable) unless the global ``--yes`` was given.
With no terminal to ask (CI, a script, a pipe) and no ``--yes`` it refuses (exit 2); an answer other
than yes stops the command (exit 1). Nothing is written in either case. Other environments, and
commands pointed by explicit flags only, are not asked.
"""

from __future__ import annotations

import sys

import click

from outreach_operator.cli.output import BadInput, Failed, Session

CONFIRMED_ENVIRONMENTS = frozenset({"prod"})


class NotConfirmed(Failed):
    """The operator answered no (exit 1): nothing was changed."""


def interactive() -> bool:
    """Whether a person can be asked: stdin is a terminal."""
    return sys.stdin.isatty()


def confirm_change(session: Session, what: str) -> None:
    """Ask before ``what`` (``"requeue 3 tasks"``) is done against prod; refuse if nobody can answer."""
    env = session.targets.env
    if env not in CONFIRMED_ENVIRONMENTS or session.yes:
        return
    if not interactive():
        raise BadInput(
            f"{what} against {env} needs a confirmation and there is no terminal to ask: "
            f"pass --yes (outreach --env {env} --yes ...); nothing changed"
        )
    caller = session.caller()
    question = f"{what} in {env} (account {caller['account']}, region {session.region()})?"
    if not click.confirm(question, default=False, err=True):
        raise NotConfirmed(f"not confirmed: {what} not done; nothing changed")
