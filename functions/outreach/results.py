"""Scrape results in S3: one object per task, so a repeated run overwrites rather than adds."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from outreach import clients, config


def result_key(job_id: str, task_id: str) -> str:
    safe_task = task_id.replace("#", "_")
    return f"results/{job_id}/{safe_task}.json"


def store_result(job_id: str, task_id: str, document: Mapping[str, Any]) -> str:
    key = result_key(job_id, task_id)
    body = json.dumps(document, ensure_ascii=False, sort_keys=True).encode()
    clients.s3().put_object(
        Bucket=config.results_bucket(),
        Key=key,
        Body=body,
        ContentType="application/json",
        ServerSideEncryption="AES256",
    )
    return key
