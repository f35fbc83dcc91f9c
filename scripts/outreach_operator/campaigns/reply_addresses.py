"""The reply address of each email of a campaign with a ``reply_domain``: one per recipient and step.

Each email's Reply-To is ``outreach.reply_token.reply_address(task_id, reply_domain)``:
``reply+<handle>.<mac>@<reply_domain>``, the handle naming the task, the MAC a truncated KMS
GenerateMac (HMAC_SHA_256) with the environment's HMAC key (root output ``unsubscribe_key_arn``; the
reply MAC has its own payload prefix, so it never equals an unsubscribe token's). One GenerateMac call
per email, made while planning, from the operator's credentials (``kms:GenerateMac`` on the key), as
the one-click links are (``one_click_links``): HMAC is deterministic, so planning again makes the same
addresses.

A dry run makes no KMS call (``key_id`` ``None``): each address carries the real handle and
``DRY_RUN_MAC`` in place of the MAC (the same length, so the address is as long as the real one).
"""

from __future__ import annotations

from outreach.email_task import REPLY_LOCAL_PREFIX, email_reply_handle, email_task_id
from outreach.errors import MalformedFieldError
from outreach.reply_token import reply_address
from outreach_operator.errors import RenderError

# 16 characters of the base32 alphabet, as long as a real MAC, and plainly not one.
DRY_RUN_MAC = "notmadeinadryrun"


class ReplyAddresses:
    """The reply address of each (step, recipient) of one campaign; ``made`` counts GenerateMac calls."""

    def __init__(self, reply_domain: str, key_id: str | None, campaign_id: str) -> None:
        self.reply_domain = reply_domain
        self.key_id = key_id
        self.campaign_id = campaign_id
        self.made = 0

    @property
    def dry_run(self) -> bool:
        return self.key_id is None

    def address(self, step: int, recipient: str) -> str:
        """The reply address of ``recipient``'s email of ``step``; RenderError (field ``reply_to``) for
        an email no reply address can be made for."""
        task_id = email_task_id(self.campaign_id, recipient, step)
        if self.key_id is None:
            handle = email_reply_handle(task_id)
            return f"{REPLY_LOCAL_PREFIX}{handle}.{DRY_RUN_MAC}@{self.reply_domain}"
        try:
            made = reply_address(task_id, self.reply_domain, key_id=self.key_id)
        except MalformedFieldError as exc:
            raise RenderError("reply_to", f"no reply address: {exc}") from exc
        self.made += 1
        return made

    def report(self) -> dict[str, object]:
        """What the schedule report says of the reply addresses."""
        if self.dry_run:
            macs = "not made: a dry run makes no KMS calls (each address carries a placeholder MAC)"
        else:
            macs = f"{self.made:,} made with KMS GenerateMac ({self.key_id})"
        return {"reply_domain": self.reply_domain, "macs": macs}
