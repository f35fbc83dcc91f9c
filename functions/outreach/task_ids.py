"""Normalised URLs and the task ids derived from them, so one site in one job is one task."""

from __future__ import annotations

import hashlib
import re
from urllib.parse import urlsplit, urlunsplit

_JOB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$")
MAX_URL_LENGTH = 2048


class InvalidJobInput(ValueError):
    """A job id or URL that cannot become a task."""


def validate_job_id(job_id: str) -> str:
    if not isinstance(job_id, str) or not _JOB_ID.match(job_id):
        raise InvalidJobInput(f"job id must match {_JOB_ID.pattern}, got {job_id!r}")
    return job_id


def normalise_url(raw: str) -> str:
    """Canonical form of a website address: scheme and host lower-case, default port, no fragment.

    A bare host (``example.com``) gets ``https://``. Raises InvalidJobInput for anything that is not an
    http(s) URL with a host.
    """
    if not isinstance(raw, str):
        raise InvalidJobInput(f"URL must be a string, got {type(raw).__name__}")
    text = raw.strip()
    if not text or len(text) > MAX_URL_LENGTH or any(ch.isspace() for ch in text):
        raise InvalidJobInput(f"not a URL: {raw!r}")
    if "://" not in text:
        text = "https://" + text
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    if scheme not in {"http", "https"}:
        raise InvalidJobInput(f"unsupported scheme {parts.scheme!r} in {raw!r}")
    try:
        host = (parts.hostname or "").rstrip(".")
        port = parts.port
    except ValueError as exc:
        raise InvalidJobInput(f"malformed host or port in {raw!r}") from exc
    if not host or parts.username or parts.password:
        raise InvalidJobInput(f"URL needs a host and no credentials: {raw!r}")
    try:
        host = host.encode("idna").decode("ascii").lower()
    except UnicodeError as exc:
        raise InvalidJobInput(f"invalid host name in {raw!r}") from exc
    if ":" in host:
        host = f"[{host}]"
    default_port = {"http": 80, "https": 443}[scheme]
    netloc = host if port in (None, default_port) else f"{host}:{port}"
    path = parts.path or "/"
    return urlunsplit((scheme, netloc, path, parts.query, ""))


def scrape_task_id(job_id: str, normalised_url: str) -> str:
    digest = hashlib.sha256(f"{job_id}\n{normalised_url}".encode()).hexdigest()[:32]
    return f"scrape#{job_id}#{digest}"
