"""What one erasure request is about: a job, or an address in every spelling it may be stored in.

An address matches case-insensitively, as itself, in its ASCII (Punycode) form and in its Unicode form,
but only as a whole address: ``doe@example.org`` is not found inside ``jane.doe@example.org``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from outreach.errors import InvalidJobInputError
from outreach.personal_data import address_hash
from outreach.task_ids import validate_job_id
from outreach_operator.errors import InvalidRequestError

# A character that can stand before or after an address without being part of it.
_BEFORE = r"(?<![A-Za-z0-9._%+'!#$&*/=?^`{|}~-])"
_AFTER = r"(?![A-Za-z0-9-]|\.[A-Za-z0-9])"
# A key of a job is not part of a longer id: job ids are [A-Za-z0-9_.:-] (task_ids._JOB_ID).
_NOT_AFTER_ID = r"(?<![A-Za-z0-9_.:#-])"
_NOT_BEFORE_ID = r"(?![A-Za-z0-9_.:-])"
_ADDRESS_SHAPE = re.compile(r"[^@\s]{1,64}@[^@\s]+\.[^@\s]+")


def _converted(domain: str, encode: str, decode: str) -> str | None:
    try:
        return domain.encode(encode).decode(decode)
    except UnicodeError:  # no such form: the domain is stored only as written
        return None


def spellings(address: str) -> set[str]:
    """The lower-cased forms an address may be stored in: as given, with its domain in Punycode, and
    with a Punycode domain in Unicode (campaign tasks store the ASCII form, scrape results the page's)."""
    local, _, domain = address.strip().lower().rpartition("@")
    domains = {domain, _converted(domain, "idna", "ascii")}
    if "xn--" in domain:
        domains.add(_converted(domain, "ascii", "idna"))
    return {f"{local}@{form.lower()}" for form in domains if form}


def strings_in(value: Any) -> Iterator[str]:
    """Every string in a deserialised row or JSON document, at any depth (map keys included); a string
    that holds JSON itself (a failure record's ``payload``) is also read as the document it is."""
    if isinstance(value, str):
        yield value
        if value[:1] in ("{", "["):
            try:
                inner = json.loads(value)
            except ValueError:  # text that only starts like JSON: searched as text, above
                return
            yield from strings_in(inner)
    elif isinstance(value, Mapping):
        for key, inner in value.items():
            yield from strings_in(key)
            yield from strings_in(inner)
    elif isinstance(value, list | tuple | set | frozenset):
        for inner in value:
            yield from strings_in(inner)


@dataclass(frozen=True)
class ErasureRequest:
    """Exactly one of ``job_id`` and ``address``."""

    job_id: str | None = None
    address: str | None = None

    @classmethod
    def of(cls, job_id: str | None, address: str | None) -> ErasureRequest:
        if (job_id is None) == (address is None):
            raise InvalidRequestError("name exactly one of --job and --address")
        if job_id is not None:
            try:
                validate_job_id(job_id)
            except InvalidJobInputError as exc:
                raise InvalidRequestError(str(exc)) from exc
            return cls(job_id=job_id)
        assert address is not None
        if not _ADDRESS_SHAPE.fullmatch(address.strip()):
            raise InvalidRequestError(f"{address!r} is not an e-mail address")
        return cls(address=address.strip())

    @property
    def subject(self) -> str:
        return f"job {self.job_id}" if self.job_id is not None else f"address {self.address}"

    @property
    def address_hash(self) -> str | None:
        """The hash the functions' logs show the address as (``personal_data.address_hash``)."""
        return address_hash(self.address) if self.address is not None else None

    @cached_property
    def _pattern(self) -> re.Pattern[str]:
        assert self.address is not None
        forms = "|".join(re.escape(form) for form in sorted(spellings(self.address)))
        return re.compile(f"{_BEFORE}(?:{forms}){_AFTER}", re.IGNORECASE)

    def mentions(self, value: Any) -> bool:
        """Whether any string in ``value`` contains the address (address requests only)."""
        return any(self._pattern.search(text) for text in strings_in(value))

    def task_id_is_of_job(self, task_id: str) -> bool:
        """Whether ``task_id`` is a key of the job: one of its tasks, its row or a counter shard."""
        job = self.job_id
        return (
            task_id.startswith((f"scrape#{job}#", f"email#{job}#", f"job#{job}#")) or task_id == f"job#{job}"
        )

    @cached_property
    def _job_keys(self) -> re.Pattern[str]:
        job = re.escape(str(self.job_id))
        return re.compile(rf"{_NOT_AFTER_ID}(?:(?:scrape|email)#{job}#|job#{job}{_NOT_BEFORE_ID})")

    def record_mentions_job(self, value: Any) -> bool:
        """Whether a document (a stream failure record) names a key of the job anywhere in its text."""
        return any(self._job_keys.search(text) for text in strings_in(value))
