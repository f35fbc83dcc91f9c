"""Fixtures for the scraping tests: a counting loopback web farm, fast settings, a connection log."""

from __future__ import annotations

import dataclasses
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from outreach.config import ScrapeSettings
from tests.support.web_farm import CertificateAuthority, WebFarm, issue_certificate, running_farm

TEST_USER_AGENT = "outreach-pipeline-scraper-tests/1.0 (+https://example.invalid/bot)"
FAST_SETTINGS = ScrapeSettings(
    user_agent=TEST_USER_AGENT,
    connect_timeout=1.0,
    read_timeout=2.0,
    max_body_bytes=64 * 1024,
    max_redirects=5,
    attempts_per_url=3,
    max_extra_pages=3,
    max_text_chars=5_000,
    allow_loopback=True,
    connections_per_site=3,
)


def settings(**changes: Any) -> ScrapeSettings:
    """Short timeouts and loopback allowed (the web farm), with ``changes`` applied."""
    return dataclasses.replace(FAST_SETTINGS, **changes)


def deadline_in(seconds: float) -> float:
    return time.monotonic() + seconds


@pytest.fixture
def farm() -> Iterator[WebFarm]:
    with running_farm() as running:
        yield running


@pytest.fixture(scope="session")
def authority(tmp_path_factory: pytest.TempPathFactory) -> CertificateAuthority:
    directory: Path = tmp_path_factory.mktemp("tls")
    return issue_certificate(directory, "site.test")


@pytest.fixture
def tls_farm(authority: CertificateAuthority) -> Iterator[WebFarm]:
    with running_farm(tls=authority.server_context()) as running:
        yield running


@pytest.fixture
def connections(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Every (address, port) any socket in this process tries to connect to during the test."""
    attempted: list[tuple[str, int]] = []
    original = socket.socket.connect

    def recording_connect(sock: socket.socket, address: Any) -> None:
        attempted.append((str(address[0]), int(address[1])))
        original(sock, address)

    monkeypatch.setattr(socket.socket, "connect", recording_connect)
    return attempted
