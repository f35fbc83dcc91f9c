"""DynamoDB reads that see each write whole: GetItem, Query and Scan never meet an update half-applied.

moto applies UpdateItem to the stored item in place (its attribute dict gains, loses and replaces
entries) while the threaded server answers reads of the same item: a Query that sizes or copies the
item at that moment fails with ``RuntimeError: dictionary changed size during iteration``, answered
as a 500, or returns an item with some of the update's actions and not others. On a busy table (the
email worker's claims and the campaign status reads of ``make local``) that happens.

DynamoDB's item operations (PutItem, GetItem, UpdateItem, DeleteItem) are each atomic
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/WorkingWithItems.html): a read gets
the item before an update or after it, never part of one, and never an error because a write ran.
Here each read's handler (the backend call and the copying of its items into the answer) holds the
lock every write holds (``dynamodb_transactions.WRITE_LOCK``), so it runs before or after a write.
"""

from __future__ import annotations

from embedded_aws.dynamodb_transactions import WRITE_LOCK
from embedded_aws.locked_methods import hold_lock

# DynamoHandler's read actions: each reads items and copies them into its answer.
_READS = ("get_item", "batch_get_item", "query", "scan", "transact_get_items")


def isolate_dynamodb_reads() -> None:
    """Make moto's DynamoDB read actions wait for a write in progress (idempotent)."""
    from moto.dynamodb.responses import DynamoHandler

    hold_lock(DynamoHandler, _READS, WRITE_LOCK)
