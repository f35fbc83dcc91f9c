"""Inputs no retry can fix are refused at once, with a reason: message bodies, job ids, URL lists, URLs."""

from __future__ import annotations

import copy
from typing import Any

import boto3
import pytest
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from outreach import scraper, task_store
from outreach.errors import InvalidJobInputError, UnreadableMessageError
from outreach.task_ids import normalise_url, scrape_task_id, validate_job_id
from tests.support.aws import REGION, Resources, receive_all
from tests.support.events import load_event, sqs_event_from_queue
from tests.support.lambda_context import FakeContext


def _record(**changes: Any) -> dict[str, Any]:
    record: dict[str, Any] = copy.deepcopy(load_event("sqs_scrape_message.json")["Records"][0])
    record.update(changes)
    return record


def _rows(resources: Resources) -> int:
    return int(boto3.client("dynamodb", region_name=REGION).scan(TableName=resources.table)["Count"])


# -- message bodies ------------------------------------------------------------------------------


def test_a_body_of_1000_nested_brackets_is_unreadable_with_its_reason() -> None:
    with pytest.raises(UnreadableMessageError) as failure:
        scraper.read_task_id("[" * 1000)
    assert failure.value.reason == "body_nested_too_deep"


def test_a_body_of_1000_nested_brackets_goes_to_the_dlq_at_once_and_is_not_retried(
    resources: Resources, lambda_context: FakeContext
) -> None:
    body = "[" * 1000
    boto3.client("sqs", region_name=REGION).send_message(QueueUrl=resources.queue_url, MessageBody=body)
    response = scraper.lambda_handler(sqs_event_from_queue(resources.queue_url), lambda_context)
    parked = receive_all(resources.dlq_url)
    assert response == {"batchItemFailures": []}
    assert [m["MessageAttributes"]["reason"]["StringValue"] for m in parked] == ["body_nested_too_deep"]


@pytest.mark.parametrize("body", ['{"task_id": "' + "\ud800" + '"}', "\x00", "1e999999", '"' + "\\" * 3])
def test_any_body_that_cannot_be_parsed_is_unreadable_never_an_unknown_error(body: str) -> None:
    try:
        task_id = scraper.read_task_id(body)
    except UnreadableMessageError as exc:
        assert exc.reason
    else:
        assert isinstance(task_id, str)


def test_a_record_without_an_approximate_receive_count_counts_as_the_first_receive() -> None:
    record = _record()
    del record["attributes"]["ApproximateReceiveCount"]
    assert scraper._receive_count(SQSRecord(record)) == 1


def test_a_record_without_attributes_counts_as_the_first_receive() -> None:
    record = _record()
    del record["attributes"]
    assert scraper._receive_count(SQSRecord(record)) == 1


# -- job ids and URL lists -----------------------------------------------------------------------


@pytest.mark.parametrize("job_id", ["job-1\n", "job-1\r\n", "\njob-1", "job 1", "", "-job", "j" * 129])
def test_a_job_id_with_a_final_newline_or_other_stray_character_is_rejected(job_id: str) -> None:
    with pytest.raises(InvalidJobInputError):
        validate_job_id(job_id)


def test_a_job_id_of_the_allowed_characters_is_accepted() -> None:
    assert validate_job_id("job-1_2026.11:a") == "job-1_2026.11:a"


def test_a_job_id_with_a_final_newline_creates_no_job(resources: Resources) -> None:
    with pytest.raises(InvalidJobInputError):
        task_store.create_scrape_job("job-1\n", ["https://example.com"])
    assert _rows(resources) == 0


@pytest.mark.parametrize("urls", ["https://example.com", b"https://example.com", 42])
def test_a_single_url_string_instead_of_a_list_is_rejected_before_anything_is_written(
    resources: Resources, urls: Any
) -> None:
    with pytest.raises(InvalidJobInputError, match="list of URL strings"):
        task_store.create_scrape_job("job-1", urls)
    assert _rows(resources) == 0


def test_a_generator_of_urls_is_a_valid_url_list(resources: Resources) -> None:
    created = task_store.create_scrape_job("job-1", (url for url in ["https://a.example", "b.example"]))
    assert len(created.created) == 2


# -- one canonical URL: IDNA 2008 ----------------------------------------------------------------


def test_a_sharp_s_domain_is_stored_in_idna_2008_form_not_as_another_registrants_domain() -> None:
    assert normalise_url("https://faß.test/") == "https://xn--fa-hia.test/"
    assert normalise_url("https://FASS.test/") == "https://fass.test/"
    assert scrape_task_id("job-1", normalise_url("https://faß.test/")) != scrape_task_id(
        "job-1", normalise_url("https://fass.test/")
    )


def test_two_sites_differing_only_in_sharp_s_become_two_tasks(resources: Resources) -> None:
    created = task_store.create_scrape_job("job-1", ["https://faß.test/", "https://fass.test/"])
    assert len(created.created) == 2
    urls = sorted(str(t.url) for t in map(task_store.get_task, created.created) if t is not None)
    assert urls == ["https://fass.test/", "https://xn--fa-hia.test/"]
