"""A function held busy on purpose: it runs until the test opens its gate (a file)."""

from __future__ import annotations

from pathlib import Path

from tests.embedded_aws.conftest import Lab

# Records each invocation (with the SQS receive count of its messages), then holds until the file
# $GATE exists: an invocation that is known to be running while the test looks at the others.
GATED_HANDLER = """
import fcntl, json, os, time

def handler(event, context):
    records = event.get("Records", [])
    entry = {"pid": os.getpid(), "event": event if not records else None,
             "ids": [r.get("messageId") or r["dynamodb"]["SequenceNumber"] for r in records],
             "receives": [int(r["attributes"]["ApproximateReceiveCount"])
                          for r in records if "attributes" in r]}
    with open(os.environ["RECORD_PATH"], "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.write(json.dumps(entry) + "\\n")
    gate = os.environ.get("GATE")
    while gate and not os.path.exists(gate):
        time.sleep(0.02)
    return {"batchItemFailures": []}
"""
# Long enough on the virtual clock (scale 60) for a held invocation to outlast the checks.
HELD_TIMEOUT = 1800


class Gate:
    """A file the gated handler waits for."""

    def __init__(self, tmp_path: Path) -> None:
        self.path = tmp_path / "gate"

    def open(self) -> None:
        self.path.touch()


def held_function(lab: Lab, name: str, gate: Gate, *, reserved: int | None) -> str:
    """A function running GATED_HANDLER with reserved concurrency ``reserved``; returns its ARN."""
    return lab.function(
        name, GATED_HANDLER, timeout=HELD_TIMEOUT, env={"GATE": str(gate.path)}, reserved=reserved
    )
