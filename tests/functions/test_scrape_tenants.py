"""A job's tenants on the scrape queue: a small job many, a big job few, each task always the same one."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from outreach.errors import MalformedFieldError
from outreach.scrape_tenants import MAX_TENANTS, row_tenant, tenant_count, tenant_name, tenant_of
from outreach.task_ids import scrape_task_id

# SendMessage's MessageGroupId: up to 128 alphanumerics and punctuation
# (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html).
MESSAGE_GROUP_ID = re.compile(r"[A-Za-z0-9!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~]{1,128}")


def _task_ids(job_id: str, sites: int) -> list[str]:
    return [scrape_task_id(job_id, f"https://site{i}.example/") for i in range(sites)]


def test_a_job_of_few_sites_gets_many_tenants_and_a_job_of_many_sites_few() -> None:
    # the bench's two jobs: 34 sites beside 343 (the 300 beside 3,000, scaled)
    assert tenant_count(34) == 30
    assert tenant_count(343) == 3
    assert tenant_count(300) == 4
    assert tenant_count(3_000) == 1


@pytest.mark.parametrize("sites", [1, 2, 31, 32, 33, 999, 1000, 1001, 100_000])
def test_the_tenant_count_is_ceil_of_1000_over_the_sites_between_1_and_32(sites: int) -> None:
    assert tenant_count(sites) == max(1, min(MAX_TENANTS, -(-1000 // sites)))
    assert 1 <= tenant_count(sites) <= MAX_TENANTS


def test_a_job_has_at_least_one_site() -> None:
    with pytest.raises(ValueError, match="at least one site"):
        tenant_count(0)


def test_a_task_is_in_the_same_tenant_on_every_call() -> None:
    ids = _task_ids("job-1", 50)
    assert [tenant_of("job-1", t, 30) for t in ids] == [tenant_of("job-1", t, 30) for t in ids]


def test_a_job_of_one_tenant_has_its_job_id_as_its_tenant() -> None:
    assert {tenant_of("big", t, 1) for t in _task_ids("big", 20)} == {"big"}


def test_a_job_s_tasks_are_spread_over_its_tenants_named_job_hash_n() -> None:
    ids = _task_ids("big", 343)
    spread = Counter(tenant_of("big", t, 3) for t in ids)
    assert set(spread) == {"big#0", "big#1", "big#2"}
    assert min(spread.values()) > 343 / 3 * 0.7
    small = {tenant_of("small", t, 30) for t in _task_ids("small", 34)}
    assert len(small) >= 15 and all(re.fullmatch(r"small#([0-9]|[12][0-9])", g) for g in small)


def test_every_tenant_is_a_message_group_id_even_of_the_longest_job_id() -> None:
    longest = "j" + "a" * 127
    for job_id in ("job-1", "2026-12-08.acme:retry_2", longest):
        for index in range(MAX_TENANTS):
            assert MESSAGE_GROUP_ID.fullmatch(tenant_name(job_id, index, MAX_TENANTS))
    assert tenant_name(longest, 31, MAX_TENANTS) == longest[:125] + "#31"


def test_a_row_without_a_tenant_has_its_job_as_its_tenant() -> None:
    assert row_tenant(None, "job-1") == "job-1"


def test_a_row_s_tenant_of_its_own_job_is_read_as_written() -> None:
    assert row_tenant("job-1#7", "job-1") == "job-1#7"
    assert row_tenant("job-1", "job-1") == "job-1"
    longest = "j" + "a" * 127
    assert row_tenant(tenant_name(longest, 4, MAX_TENANTS), longest) == longest[:126] + "#4"


@pytest.mark.parametrize(
    "stored",
    ["", "job-1 #1", "job-1#\u00e9", "job-1#1\n", "j" * 129, 7, ["job-1#1"]],
    ids=["empty", "space", "non-ascii", "newline", "129 characters", "number", "list"],
)
def test_a_row_s_tenant_that_is_no_message_group_id_is_refused_naming_the_field(stored: object) -> None:
    with pytest.raises(MalformedFieldError) as refused:
        row_tenant(stored, "job-1")
    assert refused.value.field == "message_group"


@pytest.mark.parametrize("stored", ["job-2#1", "job-2", "job-1#32", "job-1#01", "job-1#", "#1", "job-1#1#1"])
def test_a_row_s_tenant_that_is_not_one_of_its_job_s_is_refused_naming_the_field(stored: str) -> None:
    with pytest.raises(MalformedFieldError, match="not a tenant of its job") as refused:
        row_tenant(stored, "job-1")
    assert refused.value.field == "message_group"
