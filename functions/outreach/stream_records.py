"""Reading DynamoDB stream records (NEW_AND_OLD_IMAGES) as task status changes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from outreach.errors import UnparseableRecordError
from outreach.task_model import Kind, Status


@dataclass(frozen=True)
class TaskChange:
    sequence_number: str
    event_name: str
    task_id: str
    job_id: str | None
    kind: str | None
    old_status: str | None
    new_status: str | None
    # The new image's ``message_group`` (its tenant on the scrape queue), unchecked; None without one.
    message_group: str | None = None

    @property
    def scrape_task_became_pending(self) -> bool:
        """True for an INSERT of a Pending scrape task, or a MODIFY that moved one back to Pending.

        A MODIFY that stays Pending (a write that touched other attributes) is not a new piece of
        work, so it dispatches nothing.
        """
        if self.kind != Kind.SCRAPE.value or self.new_status != Status.PENDING.value:
            return False
        if self.event_name == "INSERT":
            return True
        return self.event_name == "MODIFY" and self.old_status != Status.PENDING.value


def sequence_number(record: Mapping[str, Any]) -> str | None:
    dynamodb = record.get("dynamodb")
    if not isinstance(dynamodb, Mapping):
        return None
    value = dynamodb.get("SequenceNumber")
    return value if isinstance(value, str) and value else None


def _string_attribute(image: Any, name: str) -> str | None:
    if image is None:
        return None
    if not isinstance(image, Mapping):
        raise UnparseableRecordError("image is not a map")
    value = image.get(name)
    if value is None:
        return None
    if not isinstance(value, Mapping) or not isinstance(value.get("S"), str):
        raise UnparseableRecordError(f"attribute {name} is not a string attribute value")
    return str(value["S"])


def parse_task_change(record: Mapping[str, Any]) -> TaskChange:
    """Parse one stream record; raises UnparseableRecordError when it is not a tasks-table change."""
    seq = sequence_number(record)
    if seq is None:
        raise UnparseableRecordError("record has no dynamodb.SequenceNumber")
    event_name = record.get("eventName")
    if event_name not in {"INSERT", "MODIFY", "REMOVE"}:
        raise UnparseableRecordError(f"unknown eventName {event_name!r}")
    dynamodb = record["dynamodb"]
    task_id = _string_attribute(dynamodb.get("Keys"), "task_id")
    if not task_id:
        raise UnparseableRecordError("record has no task_id key")
    new_image = dynamodb.get("NewImage")
    old_image = dynamodb.get("OldImage")
    if event_name in {"INSERT", "MODIFY"} and new_image is None:
        raise UnparseableRecordError(
            f"{event_name} without NewImage (stream view must be NEW_AND_OLD_IMAGES)"
        )
    if event_name == "MODIFY" and old_image is None:
        raise UnparseableRecordError("MODIFY without OldImage (stream view must be NEW_AND_OLD_IMAGES)")
    return TaskChange(
        sequence_number=seq,
        event_name=str(event_name),
        task_id=task_id,
        job_id=_string_attribute(new_image, "job_id") or _string_attribute(old_image, "job_id"),
        kind=_string_attribute(new_image, "kind") or _string_attribute(old_image, "kind"),
        old_status=_string_attribute(old_image, "status"),
        new_status=_string_attribute(new_image, "status"),
        message_group=_string_attribute(new_image, "message_group"),
    )
