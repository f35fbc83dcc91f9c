"""Scraper invocation on slow sites: mean t with the extra pages of a site fetched at once, or one by one.

The web farm's ``slow`` sites answer every page (not robots.txt) after ``slow_seconds``; each has a
home page and three extra pages (imprint, contact, about). Every site is scraped twice, as two jobs
on one in-process AWS (:mod:`outreach_dev.bench.sandbox`): the scraper's handler is invoked with one
SQS record per site, as the event source mapping invokes it (batch size 1), once with
``SCRAPER_CONNECTIONS_PER_SITE=1`` (the extra pages one after another, the order before they were
fetched at once) and once at the module's default; which of the two goes first alternates from site
to site, so a machine that slows down during the run weighs on both alike. t is each invocation's
wall time around the handler, claim, scrape, S3 result and finish included. The contacts (e-mail
addresses and phone numbers) each site's stored result holds must be the same sets both ways.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from statistics import mean
from typing import Any

import boto3

from embedded_aws.webfarm import WebFarm
from outreach import config, scraper, task_store
from outreach.task_ids import normalise_url, scrape_task_id
from outreach.task_model import Kind, Status
from outreach_dev import function_env
from outreach_dev.bench.lambda_context import BenchContext
from outreach_dev.bench.report import Figure, MeasurementError, Section
from outreach_dev.bench.sandbox import REGION, sandbox

TARGET = 0.6
SETTING = "SCRAPER_CONNECTIONS_PER_SITE"
ONE_BY_ONE = "1"


@dataclass(frozen=True)
class Mode:
    """One way of fetching: the setting's value, the job it scrapes, what each invocation took and found."""

    connections: str
    job_id: str
    seconds: list[float]
    contacts: dict[str, frozenset[str]]

    @property
    def mean_seconds(self) -> float:
        return mean(self.seconds)

    def as_dict(self) -> dict[str, Any]:
        return {
            "connections_per_site": int(self.connections),
            "invocations": len(self.seconds),
            "mean_seconds": self.mean_seconds,
            "min_seconds": min(self.seconds),
            "max_seconds": max(self.seconds),
            "contacts_found": sum(len(found) for found in self.contacts.values()),
        }


def default_connections() -> str:
    """The scraper's SCRAPER_CONNECTIONS_PER_SITE as Terraform gives it (the module's default)."""
    return function_env.settings("scraper")[SETTING]


def measure(sites: int, *, slow_seconds: float | None) -> tuple[Mode, Mode, float]:
    """Scrape ``sites`` slow sites one by one and at once, interleaved: (one by one, at once, page delay).

    ``slow_seconds`` None: each page takes the web farm's own delay for slow sites.
    """
    env = {"SCRAPER_ALLOW_LOOPBACK": "1"}
    farm = WebFarm(sites, mix=(("slow", 1.0),))
    if slow_seconds is not None:
        farm.slow_seconds = slow_seconds
    with sandbox("bench-sitefetch", extra_env=env), farm:
        urls = farm.urls()
        one_by_one = Mode(ONE_BY_ONE, "sitefetch-one-by-one", [], {})
        at_once = Mode(default_connections(), "sitefetch-at-once", [], {})
        if at_once.connections == ONE_BY_ONE:
            raise MeasurementError(f"the scraper's default {SETTING} is 1: nothing is fetched at once")
        for mode in (one_by_one, at_once):
            created = task_store.create_scrape_job(mode.job_id, urls).created
            if len(created) != sites:
                raise MeasurementError(f"{mode.job_id}: created {len(created)} of {sites} tasks")
        for number, url in enumerate(urls):
            for mode in (one_by_one, at_once) if number % 2 == 0 else (at_once, one_by_one):
                task_id = scrape_task_id(mode.job_id, normalise_url(url))
                with _setting(mode.connections):
                    mode.seconds.append(_invoke(task_id))
                mode.contacts[url] = _contacts(task_id)
        page_seconds = farm.slow_seconds
    return one_by_one, at_once, page_seconds


@contextmanager
def _setting(value: str) -> Iterator[None]:
    previous = os.environ.get(SETTING)
    os.environ[SETTING] = value
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(SETTING, None)
        else:
            os.environ[SETTING] = previous


def _invoke(task_id: str) -> float:
    """One scraper invocation for the task, shaped as the SQS event source mapping hands it over."""
    event = {
        "Records": [
            {
                "messageId": f"bench-{task_id[-12:]}",
                "receiptHandle": f"bench-{task_id}",
                "body": json.dumps({"task_id": task_id}),
                "attributes": {"ApproximateReceiveCount": "1"},
                "messageAttributes": {},
                "md5OfBody": "",
                "eventSource": "aws:sqs",
                "eventSourceARN": f"arn:aws:sqs:{REGION}:123456789012:bench-sitefetch-scrape",
                "awsRegion": REGION,
            }
        ]
    }
    began = time.perf_counter()
    response = scraper.lambda_handler(event, BenchContext())
    seconds = time.perf_counter() - began
    if response.get("batchItemFailures"):
        raise MeasurementError(f"the scraper handed {task_id} back for a retry")
    return seconds


def _contacts(task_id: str) -> frozenset[str]:
    """The e-mail addresses and phone numbers of the task's stored result."""
    task = task_store.load_task(task_id, Kind.SCRAPE)
    if task.status is not Status.FINISHED or task.result_key is None:
        raise MeasurementError(f"{task_id} ended {task.status.value}, not Finished with a result")
    body = boto3.client("s3", region_name=REGION).get_object(
        Bucket=config.results_bucket(), Key=task.result_key
    )
    document: Mapping[str, Any] = json.loads(body["Body"].read())
    emails = {f"email:{email['address']}" for email in document["emails"]}
    phones = {f"phone:{phone['e164']}" for phone in document["phones"]}
    return frozenset(emails | phones)


def run(sites: int, *, slow_seconds: float | None) -> Section:
    one_by_one, at_once, page_seconds = measure(sites, slow_seconds=slow_seconds)
    return section(sites, page_seconds, one_by_one, at_once)


def section(sites: int, page_seconds: float, one_by_one: Mode, at_once: Mode) -> Section:
    """The rows: mean t at once against one by one (target <= 0.6 x), and the contacts found both ways."""
    result = Section(
        "site fetch",
        details={
            "sites": sites,
            "page_seconds": page_seconds,
            "one_by_one": one_by_one.as_dict(),
            "at_once": at_once.as_dict(),
        },
    )
    t, t_before = at_once.mean_seconds, one_by_one.mean_seconds
    result.add(
        Figure(
            f"scraper invocation on slow sites: mean t, {at_once.connections} pages at once (s)",
            t,
            "s",
            baseline=t_before,
            target=f"<= {TARGET} x one by one",
            met=t <= TARGET * t_before,
        )
    )
    found = sum(len(contacts) for contacts in at_once.contacts.values())
    found_before = sum(len(contacts) for contacts in one_by_one.contacts.values())
    result.add(
        Figure(
            "contacts found on slow sites (e-mails + phones)",
            found,
            "contacts",
            baseline=found_before,
            target="the same sets as one by one",
            met=at_once.contacts == one_by_one.contacts and found > 0,
        )
    )
    return result
