"""A stream record's images are written out when the record is read, not with every write.

moto builds each DynamoDB stream record as the write is made: both images of the item converted to
attribute values (a deep copy of each attribute on the way) and the record serialised to JSON once
more to give its ``SizeBytes``. An operator's cancel of 7,200 emails spent a seventh of the embedded
AWS's time there, under the write lock, for records a stream poller reads later, or never (a table
nobody follows).

A record says what the item was before and after the write
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Streams.html: with
``NEW_AND_OLD_IMAGES`` "both the new and the old images of the item"). Here the record keeps the two
items as they were stored and writes its images out the first time it is read, with everything else
(id, sequence number, creation time, keys) taken when the write is made. That is the same record
only because a stored item is never changed in place: every write stores a new item
(``dynamodb_read_isolation`` copies the item before moto's own UpdateItem changes it, a plain update
stores a new one, PutItem and DeleteItem replace or remove), so the items a record holds stay as they
were. Installing this installs ``dynamodb_read_isolation`` first.
"""

from __future__ import annotations

from typing import Any

from embedded_aws.dynamodb_read_isolation import isolate_dynamodb_reads

_PATCHED = "__outreach_images_when_read__"
# moto's record class, as it was before the install (for the tests to compare with).
ORIGINAL: dict[str, Any] = {}


class ImagesWhenRead:
    """A stream record whose images are written out when it is first read (moto's record otherwise)."""

    __outreach_images_when_read__ = True

    def __init__(self, table: Any, stream_type: str, event_name: str, old: Any, new: Any, seq: int) -> None:
        from moto.core.utils import utcnow
        from moto.moto_api._internal import mock_random

        rec = old if old is not None else new
        keys = {table.hash_key_attr: rec.hash_key.to_json()}
        if table.range_key_attr is not None and rec is not None:
            keys[table.range_key_attr] = rec.range_key.to_json()
        self._items = (stream_type, old, new)
        self._record: dict[str, Any] | None = None
        self._head: dict[str, Any] = {
            "eventID": mock_random.uuid4().hex,
            "eventName": event_name,
            "eventSource": "aws:dynamodb",
            "eventVersion": "1.0",
            "awsRegion": "us-east-1",
            "dynamodb": {
                "StreamViewType": stream_type,
                "ApproximateCreationDateTime": utcnow(),
                "SequenceNumber": str(seq),
                "SizeBytes": 1,
                "Keys": keys,
            },
        }

    @property
    def record(self) -> dict[str, Any]:
        """The record as moto writes it, images and ``SizeBytes`` included."""
        if self._record is None:
            from moto.dynamodb.models.utilities import dynamo_json_dump

            stream_type, old, new = self._items
            record = self._head
            if stream_type in ("NEW_IMAGE", "NEW_AND_OLD_IMAGES") and new is not None:
                record["dynamodb"]["NewImage"] = new.to_json()["Attributes"]
            if stream_type in ("OLD_IMAGE", "NEW_AND_OLD_IMAGES") and old is not None:
                record["dynamodb"]["OldImage"] = old.to_json()["Attributes"]
            record["dynamodb"]["SizeBytes"] = len(dynamo_json_dump(record["dynamodb"]))
            self._record, self._items = record, ("", None, None)
        return self._record

    def to_json(self) -> dict[str, Any]:
        return self.record


def write_stream_images_when_read() -> None:
    """Make moto's stream records write their images out when first read (idempotent)."""
    from moto.dynamodb.models import table as tables

    isolate_dynamodb_reads()
    if getattr(tables.StreamRecord, _PATCHED, False):
        return
    ORIGINAL["record"] = tables.StreamRecord
    # StreamShard.add, the one maker of records, finds the class by this module-level name.
    tables.StreamRecord = ImagesWhenRead  # type: ignore[misc,assignment]
