"""Which unit tests exercise each Lambda function's handler: one row per function.

The rows reuse the handlers' own unit tests on moto, so the recording covers every path they prove:

- dispatcher: inserts and requeues dispatched, nothing for other changes, batches of ten, a partial
  send failure resent, SQS unavailable, a record without a sequence number, an unparseable record;
- scraper: a task scraped and stored, duplicate and held deliveries, a fatal error (task Failed),
  unreadable and email-task messages (DLQ), a retryable error (claim released, visibility set by the
  retry schedule), throttling, a redelivery that claims again, hostile inputs, and the deliveries the
  reconciler tests make after a requeue or a re-send;
- scrape reconciler: a task whose message went to the DLQ re-queued, one out of attempts abandoned,
  a Pending task re-sent, a task SQS will still redeliver left alone, concurrent runs, a run out of
  time, the handler's published counts;
- email worker: one email per task under repeated and concurrent invocations, cancelled and terminal
  tasks, SES throttling (claim released), permanent rejections, header injection, suppressed
  recipients and follow-ups of a bounced step, too late, a paused sending (deferred, too late past
  its grace: ``test_email_worker_paused.py``); the first-contact slots and the warm-up ramp's daily
  count of the sending identity under the account's quota (GetAccount); and its promises
  (``test_email_worker_promises.py``): the planned address only, never early, ambiguous sends left
  Running, malformed rows isolated;
- email reconciler: missing schedules recreated, overdue emails sent now or failed too late, a crash
  after send marked delivery_unknown;
- sending guard: a stop alarm's ALARM pausing the configuration set, repeated and for the other
  alarm, and the events it refuses by name;
- SES event consumer: every event kind marked on its task and counted once under duplicates, hard
  bounces, complaints, the soft-bounce limit and unsubscribe fan-outs stopping the address and
  cancelling its open emails (schedules deleted), unparseable records failed alone;
- unsubscribe endpoint: a GET's confirmation page, a POST's opt-out recorded and fanned out to the
  ses-events queue, forged, altered and replayed tokens refused;
- inbound processor: a reply matched by its token or by In-Reply-To stopping its follow-ups and
  forwarded once (duplicates, a failed and an unknown send, a lease run out), out-of-office replies
  postponing the next steps inside the window, delivery status notifications bouncing as SES would,
  mail to the unsubscribe mailbox, unmatched, unparseable and oversized messages forwarded as notices
  (``test_inbound_processor_kinds.py``), and the per-step counts of replies, auto-replies and
  forwards (``test_inbound_processor_counters.py``).

The functions are those of modules/outreach-pipeline/functions.json; each row names the tests of
one of them (deployed as ``outreach-prod-<name>``, its handler's module from the manifest). A new
function is one more row: importing this registry fails while a manifest function has no row (or a
row names no manifest function), and a planned function without a row fails
``test_every_planned_function_has_a_scenario_row``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from outreach_dev import function_manifest


@dataclass(frozen=True)
class FunctionScenarios:
    function: str
    handler_module: str
    tests: tuple[str, ...]


# Manifest function name -> the unit tests that exercise its handler.
TESTS: Mapping[str, tuple[str, ...]] = {
    "dispatcher": ("tests/functions/test_dispatcher.py",),
    "scraper": (
        "tests/functions/test_scraper.py",
        "tests/functions/test_hostile_inputs.py",
        "tests/functions/test_scrape_reconciler.py",
    ),
    "scrape_reconciler": ("tests/functions/test_scrape_reconciler.py",),
    "email_worker": (
        "tests/functions/test_email_worker.py",
        "tests/functions/test_email_worker_promises.py",
        "tests/functions/test_email_worker_first_contact.py",
        "tests/functions/test_email_worker_warmup.py",
        "tests/functions/test_email_worker_paused.py",
        "tests/functions/test_email_reconciler.py",
    ),
    "email_reconciler": ("tests/functions/test_email_reconciler.py",),
    "sending_guard": ("tests/functions/test_sending_guard.py",),
    "ses_event_consumer": ("tests/functions/test_ses_event_consumer.py",),
    "unsubscribe": ("tests/functions/unsubscribe",),
    "inbound_processor": (
        "tests/functions/test_inbound_processor.py",
        "tests/functions/test_inbound_processor_kinds.py",
        "tests/functions/test_inbound_processor_counters.py",
    ),
}

_missing = sorted(set(function_manifest.FUNCTIONS) - set(TESTS))
_unknown = sorted(set(TESTS) - set(function_manifest.FUNCTIONS))
if _missing or _unknown:
    raise LookupError(
        f"tests/iam/scenarios.py: functions.json functions without a row {_missing}, "
        f"rows of no functions.json function {_unknown}"
    )

FUNCTIONS: tuple[FunctionScenarios, ...] = tuple(
    FunctionScenarios(function.deployed_name("prod"), function.handler_module, TESTS[name])
    for name, function in function_manifest.FUNCTIONS.items()
)
