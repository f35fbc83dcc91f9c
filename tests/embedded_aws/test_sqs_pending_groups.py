"""ReceiveMessage in the embedded AWS never fails because an in-flight message was deleted meanwhile.

AWS: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ReceiveMessage.html
(Errors: none for a concurrent DeleteMessage).
"""

from __future__ import annotations

from typing import Any

import boto3
from moto import mock_aws
from moto.core.models import DEFAULT_ACCOUNT_ID
from moto.sqs.models import sqs_backends

from embedded_aws.sqs_pending_groups import read_pending_groups_from_a_snapshot

REGION = "eu-west-3"


class _InFlight:
    """An in-flight message of a group."""

    def __init__(self, group_id: str) -> None:
        self._group_id = group_id

    @property
    def group_id(self) -> str:
        return self._group_id


class _DeletedWhileRead(_InFlight):
    """An in-flight message whose group is read at the moment another request deletes ``other``: the
    thread switch the threaded server makes, placed where it breaks the iteration every time."""

    def __init__(self, group_id: str, in_flight: set[Any], other: _InFlight) -> None:
        super().__init__(group_id)
        self._in_flight, self._other = in_flight, other

    @property
    def group_id(self) -> str:
        self._in_flight.discard(self._other)
        return self._group_id


def test_in_flight_groups_are_read_whole_while_a_delete_changes_the_set() -> None:
    read_pending_groups_from_a_snapshot()
    with mock_aws():
        boto3.client("sqs", region_name=REGION).create_queue(QueueName="events")
        queue: Any = sqs_backends[DEFAULT_ACCOUNT_ID][REGION].queues["events"]
        other = _InFlight("g2")
        in_flight: set[Any] = {other}
        in_flight.add(_DeletedWhileRead("g1", in_flight, other))
        queue._pending_messages = in_flight

        groups = queue.pending_message_groups

    assert groups == {"g1", "g2"}
