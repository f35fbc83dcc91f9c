"""Peak memory of a scrape of each hostile web-farm site, measured in a fresh process (VmHWM).

The scraper Lambda has 1536 MB; a hostile site must not come near it. Each kind is scraped with the
scraper's default limits in its own interpreter, so the figure is that site's alone (interpreter and
imports included, about 50 MB). The figure is the process's own high-water mark (``VmHWM`` in
``/proc/self/status``), not ``ru_maxrss``: Linux carries ``ru_maxrss`` across fork and exec, so a child
of a large test process would report its parent's size.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from embedded_aws.webfarm import HOSTILE_KINDS, WebFarm
from outreach_dev import function_env

PEAK_MEMORY_LIMIT_MB = 300
REPO = Path(__file__).resolve().parents[3]

_SCRAPE_ONE = """
import json, sys, time
from outreach.config import ScrapeSettings
from outreach.errors import ScrapeError
from outreach.scraping import scrape_site
settings = ScrapeSettings.from_env()
try:
    site = scrape_site(sys.argv[1], deadline=time.monotonic() + 60, settings=settings)
    outcome = "Finished"
except ScrapeError as exc:
    outcome = exc.reason
with open("/proc/self/status") as status:
    peak_kb = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
print(json.dumps({"outcome": outcome, "peak_kb": peak_kb}))
"""


@pytest.fixture(scope="module")
def hostile_farm() -> Iterator[WebFarm]:
    with WebFarm(0, hostile_copies=1) as farm:
        yield farm


@pytest.mark.parametrize("kind", list(HOSTILE_KINDS))
def test_scraping_a_hostile_site_peaks_under_300_mb(hostile_farm: WebFarm, kind: str) -> None:
    site = next(s for s in hostile_farm.sites if s.kind == kind)
    env = {
        "PYTHONPATH": str(REPO / "functions"),
        **function_env.settings("scraper"),
        "SCRAPER_ALLOW_LOOPBACK": "1",
        "PATH": "/usr/bin:/bin",
    }
    done = subprocess.run(
        [sys.executable, "-c", _SCRAPE_ONE, hostile_farm.url(site.number)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    assert measured["outcome"] == (HOSTILE_KINDS[kind] or "Finished")
    peak_mb = measured["peak_kb"] / 1024
    print(f"{kind}: {measured['outcome']}, peak RSS {peak_mb:.0f} MB")
    assert peak_mb < PEAK_MEMORY_LIMIT_MB
