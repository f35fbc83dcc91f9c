"""The one shape of a found e-mail address and phone number, in the page extract, the result and the summary.

An e-mail address is stored as ``{"address", "page", "decoded"}``: the address in lower case, the URL of
the page it was found on, and how it was read (:class:`Decoded`). A phone number is stored as
``{"e164", "kind", "as_found", "page"}``: the number in E.164 form, ``phone`` or ``fax``
(:class:`PhoneKind`), the text as written on the page (the ``tel:`` target for a link; zero-width
characters dropped) and the page's URL. The README's "Results" section shows an example.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Decoded(StrEnum):
    """How an e-mail address was read from the page."""

    MAILTO = "mailto"  # a mailto: link
    CLOUDFLARE = "cloudflare"  # Cloudflare's e-mail protection (XOR-encoded hex)
    WRITTEN_OUT = "written_out"  # "info [at] example [dot] de" and the like
    PLAIN = "plain"  # as an address in the visible text


class PhoneKind(StrEnum):
    PHONE = "phone"
    FAX = "fax"


@dataclass(frozen=True)
class FoundEmail:
    address: str
    page: str
    decoded: Decoded

    def to_document(self) -> dict[str, str]:
        return {"address": self.address, "page": self.page, "decoded": self.decoded.value}


@dataclass(frozen=True)
class FoundPhone:
    e164: str
    kind: PhoneKind
    as_found: str
    page: str

    def to_document(self) -> dict[str, str]:
        return {"e164": self.e164, "kind": self.kind.value, "as_found": self.as_found, "page": self.page}
