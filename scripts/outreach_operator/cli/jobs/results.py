"""A scrape job's results in the results bucket: their keys, their documents, the task each is for."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from outreach import clients


def result_task_id(job_id: str, key: str) -> str:
    """The task id a result key was written for (``outreach.results.result_key`` in reverse)."""
    digest = key.rsplit("/", 1)[-1].removesuffix(".json").rsplit("_", 1)[-1]
    return f"scrape#{job_id}#{digest}"


def result_keys(bucket: str, job_id: str) -> list[str]:
    """The keys of the job's results in ``bucket`` (one per finished task), sorted."""
    prefix = f"results/{job_id}/"
    return sorted(
        obj["Key"]
        for page in clients.s3().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        for obj in page.get("Contents", [])
    )


def result_documents(bucket: str, keys: Sequence[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(key, result document)`` for each of ``keys``, read one at a time."""
    for key in keys:
        yield key, json.loads(clients.s3().get_object(Bucket=bucket, Key=key)["Body"].read())
