"""Replaying a DLQ message by message: delete only what was handled, hand back everything else."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from rich.console import Console

from outreach_operator.cli import queue_messages as queue
from outreach_operator.cli.output import BadInput, Failed, PartlyDone, Session, table
from outreach_operator.errors import ReplayRefusedError

Handler = Callable[[dict[str, Any], bool], dict[str, Any]]


def replay_queue(s: Session, url: str, handler: Handler, *, limit: int, dry_run: bool, what: str) -> None:
    """Run ``handler`` on each message; delete only those it handled, hand back everything else.

    A message the handler refuses (``ReplayRefusedError``) is not acted on and stays; any refusal ends the
    command with exit 2 naming what was refused, after the other messages were replayed.
    """
    messages = queue.receive(url, limit)
    handled: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    refused: list[dict[str, Any]] = []
    remaining = list(messages)
    try:
        while remaining:
            message = remaining[0]
            try:
                outcome = handler(message, dry_run)
            except ReplayRefusedError as exc:  # not this replay's to act on: stays in the queue
                refused.append({"message_id": message["MessageId"], "subject": exc.subject, "why": exc.why})
                queue.release(url, [remaining.pop(0)])
                continue
            except (RuntimeError, ValueError, KeyError) as exc:  # this message stays in the queue
                failed.append({"message_id": message["MessageId"], "error": str(exc)})
                queue.release(url, [remaining.pop(0)])
                continue
            if not dry_run:
                queue.delete(url, message)
            remaining.pop(0)
            handled.append({"message_id": message["MessageId"], **outcome})
    except Exception as exc:
        queue.release(url, remaining)
        raise PartlyDone(
            f"replay {what}",
            [h["message_id"] for h in handled],
            [m["MessageId"] for m in remaining]
            + [f["message_id"] for f in failed]
            + [r["message_id"] for r in refused],
            exc,
        ) from exc
    if dry_run:
        queue.release(url, messages)
    report = {
        "dry_run": dry_run,
        "replayed" if not dry_run else "would_replay": handled,
        "failed": failed,
        "refused": refused,
    }

    def render(console: Console) -> None:
        verb = "would replay" if dry_run else "replayed (deleted)"
        console.print(
            table(
                f"{verb} {len(handled)} of {len(messages)} messages",
                ["message", "result"],
                [
                    [
                        h["message_id"],
                        json.dumps({k: v for k, v in h.items() if k != "message_id"}, default=str)[:300],
                    ]
                    for h in handled
                ],
            )
        )
        if failed:
            console.print(
                table(
                    "left in the queue", ["message", "error"], [[f["message_id"], f["error"]] for f in failed]
                )
            )
        if refused:
            console.print(
                table(
                    "refused (left in the queue)",
                    ["message", "target", "why"],
                    [[r["message_id"], r["subject"], r["why"]] for r in refused],
                )
            )

    s.emit(report, render)
    if refused:
        subjects = ", ".join(sorted({r["subject"] for r in refused}))
        raise BadInput(
            f"{len(refused)} of {len(messages)} messages refused and left in the queue ({subjects}): "
            f"{refused[0]['why']}"
        )
    if failed:
        raise Failed(
            f"{len(failed)} of {len(messages)} messages could not be replayed; they stay in the queue"
        )
