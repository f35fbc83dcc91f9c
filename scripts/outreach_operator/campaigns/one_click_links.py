"""The default unsubscribe target: a one-click link to the environment's endpoint, one per recipient and step.

A campaign file without an ``unsubscribe`` of its own gets, for each email, the link
``unsubscribe.token.link(unsubscribe_url, make_token(key, campaign, step, address))``: the
environment's unsubscribe function URL (root output ``unsubscribe_url``) with a token that proves
which address, campaign and step it is for, an HMAC made by KMS GenerateMac with the environment's
HMAC key (``unsubscribe_key_arn``; the secret never leaves KMS). The link is the ``{{ unsubscribe }}``
placeholder and the List-Unsubscribe target (the worker adds ``List-Unsubscribe-Post: List-Unsubscribe=
One-Click`` for an https target, RFC 8058), and it is held to the same rule as a campaign's own
target (``unsubscribe_uri``): one https URI on the endpoint's host.

Each token is one GenerateMac call from the operator's credentials (``kms:GenerateMac`` on the key),
made while planning, before anything is written: 7,200 for 3,600 recipients of a two-step campaign,
one at a time, far under KMS's shared request quota for symmetric and HMAC cryptographic operations
(at least 5,500 a second: https://docs.aws.amazon.com/kms/latest/developerguide/requests-per-second.html).
HMAC is deterministic, so planning the same campaign again makes the same links and the same messages.

A dry run makes no KMS call (``key_id`` ``None``): each link carries ``DRY_RUN_TOKEN`` instead of a
token, and the report says so; the link is checked as a real one would be, and its length is
the only thing that differs (a real token is a few hundred characters, well under the 900 characters
the unsubscribe target may have, ``message_caps.UNSUBSCRIBE_CHARS``).
"""

from __future__ import annotations

from outreach.errors import MalformedFieldError
from outreach.unsubscribe import token
from outreach_operator.campaigns.unsubscribe_uri import origin_of
from outreach_operator.errors import RenderError

DRY_RUN_TOKEN = "not-made-in-a-dry-run"


class UnusableEndpointError(ValueError):
    """An unsubscribe URL that cannot be the List-Unsubscribe target (not https, or has a query)."""


class OneClickLinks:
    """The one-click link of each (step, address) of one campaign; ``made`` counts the GenerateMac calls."""

    def __init__(self, base_url: str, key_id: str | None, campaign_id: str) -> None:
        shown = f"unsubscribe url {base_url[:200]!r}"
        try:
            origin = origin_of(base_url)
        except ValueError as exc:
            raise UnusableEndpointError(f"{shown}: {exc}") from exc
        if origin.scheme != "https":
            raise UnusableEndpointError(f"{shown}: one-click needs https (RFC 8058)")
        try:
            token.link(base_url, DRY_RUN_TOKEN)
        except ValueError as exc:
            raise UnusableEndpointError(f"{shown}: {exc}") from exc
        self.base_url = base_url
        self.key_id = key_id
        self.campaign_id = campaign_id
        self.made = 0

    @property
    def dry_run(self) -> bool:
        return self.key_id is None

    def link(self, step: int, address: str) -> str:
        """The link for ``address`` in ``step``; RenderError (field ``unsubscribe``) for an address or
        campaign no token can be made for."""
        if self.key_id is None:
            return token.link(self.base_url, DRY_RUN_TOKEN)
        try:
            made = token.make_token(self.key_id, self.campaign_id, step, address)
        except MalformedFieldError as exc:
            raise RenderError("unsubscribe", f"no one-click token: {exc}") from exc
        self.made += 1
        return token.link(self.base_url, made)

    def report(self) -> dict[str, object]:
        """What the schedule report says of the default target."""
        if self.dry_run:
            tokens = "not made: a dry run makes no KMS calls (each link carries a placeholder token)"
        else:
            tokens = f"{self.made:,} made with KMS GenerateMac ({self.key_id})"
        return {"default": True, "url": self.base_url, "tokens": tokens}
