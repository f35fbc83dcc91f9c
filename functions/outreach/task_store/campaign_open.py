"""The sparse ``campaign-open`` index: one campaign's open email tasks, by status and send time.

An email task carries ``campaign_open_key`` = ``<campaign id>#<status>#<shard>`` while it is Pending or
Running, the partition key of the global secondary index ``campaign-open``, whose sort key is
``send_at``. DynamoDB writes an index entry only for an item that has the index's key attributes, so
the index holds exactly the open emails and a Query of one key reads one campaign's emails in one
status, earliest send first, never another campaign's
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-indexes-general-sparse-indexes.html).
The key is set when the task is created (``creation``) and moved or removed in the same write that
moves or removes its ``open_key`` (``transitions.rule_update``, which ``transitions_batched`` reuses);
a change of ``send_at`` (a deferral, a postponement) moves the entry within its key.

The shard is the task's ``open-tasks`` shard (``task_model.shard_of`` over ``config.open_index_shards``,
kept by every status change): one index partition key takes at most 1,000 write units a second and a
throttled index write throttles the table write
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.ThroughputConsiderations),
and creating a campaign writes every email under its campaign's Pending key, so the campaign's entries
are spread as its ``open-tasks`` entries are. Readers query each shard of the campaign.

The index projects every attribute (``ALL``): ``campaign cancel`` names the fields it needs in its
Query's projection (``open_emails``), and a list of projected attributes in the index would repeat
the row's schema in Terraform. Like every global secondary index it is eventually consistent
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html): an entry read may be a
moment behind its row, which the conditional writes on the rows themselves make safe.
"""

from __future__ import annotations

from typing import Any

from outreach import config
from outreach.task_model import OPEN, Kind, Status
from outreach.task_store.items import IndexRead, pages, to_avs

CAMPAIGN_OPEN_INDEX = "campaign-open"
CAMPAIGN_OPEN_KEY = "campaign_open_key"


def campaign_open_key(campaign_id: str, status: Status, shard: int) -> str:
    """The ``campaign-open`` key of a campaign's email task in an open ``status`` and ``shard``."""
    if status not in OPEN:
        raise ValueError(f"only open statuses are indexed, not {status}")
    return f"{campaign_id}#{status.value}#{shard}"


def campaign_key_fields(kind: str, campaign_id: str | None, status: Status, shard: int) -> dict[str, str]:
    """The ``campaign_open_key`` a task of ``kind`` carries in an open ``status``: an email task only
    (a terminal move removes the attribute, ``CAMPAIGN_OPEN_KEY``, as it removes ``open_key``)."""
    if kind != Kind.EMAIL.value or campaign_id is None:
        return {}
    return {CAMPAIGN_OPEN_KEY: campaign_open_key(campaign_id, status, shard)}


def campaign_open_request(campaign_id: str, status: Status, shard: int) -> dict[str, Any]:
    """The Query of one campaign's entries in one open ``status`` and ``shard``, earliest send first."""
    return {
        "IndexName": CAMPAIGN_OPEN_INDEX,
        "KeyConditionExpression": "#key = :key",
        "ExpressionAttributeNames": {"#key": CAMPAIGN_OPEN_KEY},
        "ExpressionAttributeValues": to_avs({":key": campaign_open_key(campaign_id, status, shard)}),
        "ScanIndexForward": True,
    }


def next_send_at(campaign_id: str, *, cost: IndexRead | None = None) -> str | None:
    """The earliest ``send_at`` of the campaign's Pending emails; ``None`` when it has none.

    One Query per shard, ``Limit`` 1 in ascending ``send_at`` order, ``send_at`` only: at most one entry
    read a shard, whatever the campaign's or any other campaign's size.
    """
    earliest: list[str] = []
    for shard in range(config.open_index_shards()):
        request = campaign_open_request(campaign_id, Status.PENDING, shard)
        request["ExpressionAttributeNames"]["#at"] = "send_at"
        request.update({"Limit": 1, "ProjectionExpression": "#at"})
        first = next(pages("query", request, cost=cost))
        earliest.extend(str(item["send_at"]["S"]) for item in first.get("Items", []) if "send_at" in item)
    return min(earliest) if earliest else None
