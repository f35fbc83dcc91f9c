"""Normalised URLs and the task ids derived from them, so one site in one job is one task."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

from outreach.canonical_url import canonical_url
from outreach.errors import InvalidJobInputError, UnusableUrlError

_JOB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}")


def validate_job_id(job_id: str) -> str:
    """``job_id`` itself if it is a string matching the job id pattern in full (no final newline)."""
    if not isinstance(job_id, str) or not _JOB_ID.fullmatch(job_id):
        raise InvalidJobInputError(f"job id must match {_JOB_ID.pattern} in full, got {job_id!r}")
    return job_id


def validate_url_list(urls: Iterable[str]) -> Iterable[str]:
    """``urls`` itself if it is a collection of URLs: a single string or bytes is not one."""
    if isinstance(urls, str | bytes | bytearray | memoryview):
        raise InvalidJobInputError(f"urls must be a list of URL strings, got one {type(urls).__name__}")
    if not isinstance(urls, Iterable):
        raise InvalidJobInputError(f"urls must be a list of URL strings, got {type(urls).__name__}")
    return urls


def normalise_url(raw: str) -> str:
    """The canonical form (:mod:`outreach.canonical_url`) of a website address.

    A bare host (``example.com``) gets ``https://``. Raises InvalidJobInputError for anything that is not an
    http(s) URL with a host.
    """
    if not isinstance(raw, str):
        raise InvalidJobInputError(f"URL must be a string, got {type(raw).__name__}")
    text = raw.strip()
    if text and "://" not in text:
        text = "https://" + text
    try:
        return str(canonical_url(text))
    except UnusableUrlError as exc:
        raise InvalidJobInputError(f"not a usable URL: {raw[:200]!r}: {exc}") from exc


def scrape_task_id(job_id: str, normalised_url: str) -> str:
    digest = hashlib.sha256(f"{job_id}\n{normalised_url}".encode()).hexdigest()[:32]
    return f"scrape#{job_id}#{digest}"
