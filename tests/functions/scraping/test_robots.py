"""robots.txt: fetched once per origin and task, honoured for the scraper's user agent, recorded."""

from __future__ import annotations

from typing import Any

import pytest

from outreach.config import ScrapeSettings
from outreach.errors import ConfigurationError, FatalScrapeError
from outreach.scraping import scrape_site
from outreach.scraping.site_scrape import SiteScrape
from outreach_dev import function_env
from tests.functions.scraping.conftest import TEST_USER_AGENT, deadline_in, settings
from tests.support.web_farm import Reply, WebFarm

HOME = (
    "<html><body><a href='/impressum'>Impressum</a> <a href='/kontakt'>Kontakt</a>"
    "<p>info@muster.example</p></body></html>"
)
PAGE = "<html><body><p>Tel: +49 731 123456</p></body></html>"


def serve(farm: WebFarm, robots: str | None) -> None:
    farm.html("/", HOME)
    farm.html("/impressum", PAGE)
    farm.html("/kontakt", PAGE)
    if robots is not None:
        farm.route("/robots.txt", Reply(body=robots.encode(), content_type="text/plain"))


def scrape(farm: WebFarm, **changes: Any) -> SiteScrape:
    return scrape_site(
        farm.url("/"), deadline=deadline_in(20), settings=settings(**changes), backoff_base_seconds=0.01
    )


def test_a_home_page_disallowed_by_robots_txt_fails_with_robots_disallowed_unfetched(farm: WebFarm) -> None:
    serve(farm, "User-agent: *\nDisallow: /\n")
    with pytest.raises(FatalScrapeError) as failure:
        scrape(farm)
    assert failure.value.reason == "robots_disallowed"
    assert dict(farm.hits) == {"/robots.txt": 1}


def test_rules_for_the_scrapers_own_user_agent_win_over_the_wildcard(farm: WebFarm) -> None:
    token = TEST_USER_AGENT.split("/", 1)[0]
    serve(farm, f"User-agent: *\nAllow: /\n\nUser-agent: {token}\nDisallow: /\n")
    with pytest.raises(FatalScrapeError) as failure:
        scrape(farm)
    assert failure.value.reason == "robots_disallowed"


def test_a_disallowed_extra_page_is_skipped_unfetched_and_the_decision_recorded(farm: WebFarm) -> None:
    serve(farm, "User-agent: *\nDisallow: /impressum\n")
    site = scrape(farm)
    assert [(page.url.rsplit("/", 1)[1], page.skipped) for page in site.pages] == [
        ("", None),
        ("impressum", "robots_disallowed"),
        ("kontakt", None),
    ]
    assert "/impressum" not in farm.hits
    assert farm.hits["/robots.txt"] == 1  # once per task, not per page
    robots = site.to_document()["robots"]
    assert robots["respected"] is True
    size = len("User-agent: *\nDisallow: /impressum\n")
    assert robots["origins"] == [
        {"url": farm.url("/robots.txt"), "status": "read", "detail": f"{size} bytes"}
    ]
    assert robots["disallowed"] == [farm.url("/impressum")]


@pytest.mark.parametrize(
    "reply",
    [
        Reply(status=404, body=b"not found"),
        Reply(status=500, body=b"oops"),
        Reply(body=b"\x00\xff<html>garbage\nDisallow /\n" * 50, content_type="application/octet-stream"),
    ],
    ids=["missing", "server-error", "garbage"],
)
def test_a_missing_or_broken_robots_txt_allows_everything(farm: WebFarm, reply: Reply) -> None:
    serve(farm, None)
    farm.route("/robots.txt", reply)
    site = scrape(farm)
    assert [page.skipped for page in site.pages] == [None, None, None]
    assert site.to_document()["robots"]["disallowed"] == []


def test_with_robots_txt_switched_off_nothing_is_fetched_and_everything_allowed(farm: WebFarm) -> None:
    serve(farm, "User-agent: *\nDisallow: /\n")
    site = scrape(farm, respect_robots_txt=False)
    assert "/robots.txt" not in farm.hits
    assert site.to_document()["robots"] == {"respected": False, "origins": [], "disallowed": []}


@pytest.mark.parametrize(
    ("value", "expected"), [(None, True), ("1", True), ("on", True), ("0", False), ("false", False)]
)
def test_robots_txt_is_respected_unless_the_environment_switches_it_off(
    monkeypatch: pytest.MonkeyPatch, value: str | None, expected: bool
) -> None:
    # None: the scraper's settings as Terraform sets them by default.
    for name, setting in function_env.settings("scraper").items():
        monkeypatch.setenv(name, setting)
    if value is not None:
        monkeypatch.setenv("SCRAPER_RESPECT_ROBOTS_TXT", value)
    assert ScrapeSettings.from_env().respect_robots_txt is expected


def test_a_misspelt_robots_switch_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, setting in function_env.settings("scraper").items():
        monkeypatch.setenv(name, setting)
    monkeypatch.setenv("SCRAPER_RESPECT_ROBOTS_TXT", "maybe")
    with pytest.raises(ConfigurationError):
        ScrapeSettings.from_env()
