"""Reconciler items read and time against table size: the ``open-tasks`` index against a Scan.

Each table holds ``size`` terminal scrape tasks (terminal rows carry no ``open_key``, so the sparse
index does not hold them), written through moto's backend, plus 20 stuck Pending tasks created the
way a job creates them, older than the threshold. Both reconcilers run against the same table in the
same run; ours must read no more than the stuck tasks plus one page at every size, in no more Query
pages than one per shard of the ``open-tasks`` key and open status (``OPEN_INDEX_SHARDS``, the
module's default) plus the pages the stuck tasks fill.
"""

from __future__ import annotations

import math
import time

from moto.dynamodb.models import dynamodb_backends

from outreach import clock, config, task_store
from outreach.reconcilers import scrape as reconciler
from outreach.task_model import OPEN
from outreach_dev.bench import scan_reconciler
from outreach_dev.bench.report import Figure, MeasurementError, Section
from outreach_dev.bench.sandbox import ACCOUNT, REGION, sandbox

STUCK = 20


def _seed_terminal(table: str, size: int) -> None:
    backend = dynamodb_backends[ACCOUNT][REGION]
    stamp = clock.iso()
    for i in range(size):
        backend.put_item(
            table,
            {
                "task_id": {"S": f"done-{i:07d}"},
                "kind": {"S": "scrape"},
                "job_id": {"S": "old-job"},
                "status": {"S": "Finished"},
                "url": {"S": f"https://done{i}.example/"},
                "attempts": {"N": "1"},
                "created_at": {"S": stamp},
                "updated_at": {"S": stamp},
            },
        )


def run(sizes: tuple[int, ...]) -> Section:
    section = Section("reconciler scaling", details={"stuck": STUCK, "sizes": {}})
    for size in sizes:
        with sandbox(f"bench-reconcile-{size}") as box:
            _seed_terminal(box.table, size)
            task_store.create_scrape_job("stuck", [f"https://stuck{i}.example" for i in range(STUCK)])
            settings = config.ReconcilerSettings.from_env()
            shards = config.open_index_shards()
            box.advance(settings.pending_after_seconds + 1)
            # The baseline acts first; its marks make the tasks fresh, so the clock moves past the
            # threshold again before ours runs: both find the same 20 stale tasks in the same table.
            began = time.perf_counter()
            scanned = scan_reconciler.reconcile(settings)
            scan_seconds = time.perf_counter() - began
            box.advance(settings.pending_after_seconds + 1)
            began = time.perf_counter()
            ours = reconciler.reconcile(settings, lambda: 60.0)
            our_seconds = time.perf_counter() - began
        if ours.actions["redispatched"] != STUCK or scanned.examined != STUCK:
            raise MeasurementError(
                f"size {size}: ours re-sent {ours.actions['redispatched']}, the Scan found "
                f"{scanned.examined}, of {STUCK} stuck tasks"
            )
        bound = STUCK + settings.page_size
        page_bound = len(OPEN) * shards + math.ceil(STUCK / settings.page_size)
        section.details["sizes"][str(size)] = {
            "ours_items_read": ours.items_read,
            "ours_pages": ours.pages_read,
            "open_index_shards": shards,
            "ours_seconds": our_seconds,
            "scan_items_read": scanned.items_read,
            "scan_pages": scanned.pages_read,
            "scan_seconds": scan_seconds,
        }
        section.add(
            Figure(
                f"{size:,} terminal + {STUCK} stuck: items read",
                ours.items_read,
                "items",
                baseline=scanned.items_read,
                target=f"<= {bound}",
                met=ours.items_read <= bound,
            )
        )
        section.add(
            Figure(
                f"{size:,} terminal + {STUCK} stuck: Query pages, {shards} shards",
                ours.pages_read,
                "pages",
                baseline=scanned.pages_read,
                target=f"<= {page_bound}",
                met=ours.pages_read <= page_bound,
            )
        )
        section.add(
            Figure(
                f"{size:,} terminal + {STUCK} stuck: run time (s)", our_seconds, "s", baseline=scan_seconds
            )
        )
    return section
