"""Where a campaign without its own ``unsubscribe`` links: the environment's one-click endpoint.

The endpoint is the root output ``unsubscribe_url`` (or ``--unsubscribe-url``), the key the tokens are
made with ``unsubscribe_key_arn`` (or ``--unsubscribe-key-arn``). A real schedule needs both; a dry
run needs the URL only and makes no KMS call (``one_click_links``), which its report says. A campaign
with its own ``unsubscribe`` needs neither.
"""

from __future__ import annotations

from typing import Any

from outreach_operator.campaigns.campaign_file import Campaign
from outreach_operator.campaigns.one_click_links import OneClickLinks, UnusableEndpointError
from outreach_operator.cli.output import BadInput, Session


def one_click_links(s: Session, campaign: Campaign, *, dry_run: bool) -> OneClickLinks | None:
    """The one-click links of ``campaign`` if it has no ``unsubscribe`` of its own, else ``None``."""
    if campaign.unsubscribe is not None:
        return None
    if not s.targets.unsubscribe_url:
        raise BadInput(
            "the campaign has no unsubscribe of its own and the environment names no one-click endpoint: "
            "pass --unsubscribe-url (and --unsubscribe-key-arn), use --env, or give the campaign an "
            "unsubscribe"
        )
    key = None if dry_run else s.targets.require("unsubscribe_key_arn", "--unsubscribe-key-arn")
    try:
        return OneClickLinks(s.targets.unsubscribe_url, key, campaign.campaign_id)
    except UnusableEndpointError as exc:
        raise BadInput(str(exc)) from exc


def unsubscribe_report(campaign: Campaign, links: OneClickLinks | None) -> dict[str, Any]:
    """What the schedule report says of the unsubscribe target."""
    if links is None:
        return {"default": False, "template": campaign.unsubscribe}
    return links.report()
