"""The CKV_OUT_* policies on Terraform shaped like public registry modules: instances, not nodes.

The fixtures ``i16_cause_*`` call ``registry_shaped_modules/`` the way teams call the widely used
SQS and Lambda registry modules: ``count = var.create ? 1 : 0``, a ``for_each`` over a map of
event source mappings filtered by ``local.create``, attributes read with ``try(each.value.x, null)``.
"""

from __future__ import annotations

from tests.policies.checkov_report import CUSTOM_CHECK_IDS, CheckovReport, run_checkov
from tests.policies.conftest import FIXTURES

ESM = "aws_lambda_event_source_mapping"


def verdicts(report: CheckovReport, fixture: str) -> dict[str, tuple[set[str], set[str]]]:
    """``{check id: (passed, failed)}`` of one fixture root, for every rule that judged something."""
    return {
        check_id: (outcomes.passed, outcomes.failed)
        for (check_id, root), outcomes in report.results.items()
        if root == fixture
    }


def test_a_module_switched_off_with_create_false_is_not_judged(fixture_report: CheckovReport) -> None:
    # GIVEN a worker module called with create = false next to a live one (cause 1)
    found = verdicts(fixture_report, "i16_cause_1_zero_instances")
    # THEN only the live worker's mapping and its queue get verdicts; the stream rule judges nothing
    assert found == {
        "CKV_OUT_002": ({f'module.orders_worker.{ESM}.this["jobs"]'}, set()),
        "CKV_OUT_003": ({"module.orders_queue.aws_sqs_queue.this[0]"}, set()),
        "CKV_OUT_004": ({"module.orders_queue.aws_sqs_queue.this[0]"}, set()),
        "CKV_OUT_007": (set(), {"module.orders_queue.aws_sqs_queue.dlq[0]"}),
    }


def test_a_map_of_mappings_is_judged_per_entry_by_the_rule_of_its_source(
    fixture_report: CheckovReport,
) -> None:
    # GIVEN one mapping resource with for_each over two SQS entries, complete and incomplete (cause 2)
    found = verdicts(fixture_report, "i16_cause_2_map_of_mappings")
    # THEN the SQS rule judges each entry as its own resource, the stream rule none, and only the
    # entry lacking ReportBatchItemFailures fails
    incomplete = f"module.billing_workers_one_entry_without_item_failures.{ESM}.this"
    assert found == {
        "CKV_OUT_002": (
            {
                f'module.billing_workers_ok.{ESM}.this["jobs"]',
                f'module.billing_workers_ok.{ESM}.this["retries"]',
                f'{incomplete}["jobs"]',
            },
            {f'{incomplete}["audit"]'},
        ),
        "CKV_OUT_003": (
            {
                "module.billing_queue.aws_sqs_queue.this[0]",
                "module.billing_retry_queue.aws_sqs_queue.this[0]",
            },
            set(),
        ),
        "CKV_OUT_004": (
            {
                "module.billing_queue.aws_sqs_queue.this[0]",
                "module.billing_retry_queue.aws_sqs_queue.this[0]",
            },
            set(),
        ),
        "CKV_OUT_007": (
            set(),
            {"module.billing_queue.aws_sqs_queue.dlq[0]", "module.billing_retry_queue.aws_sqs_queue.dlq[0]"},
        ),
    }
    details = fixture_report.of("CKV_OUT_002", "i16_cause_2_map_of_mappings").details
    assert details[f'{incomplete}["audit"]'] == [
        'function_response_types must contain "ReportBatchItemFailures": without it Lambda '
        "deletes every message of a batch whose invocation returned, ignoring batchItemFailures"
    ]


def test_a_queue_named_only_by_a_for_each_entry_is_a_consumed_queue(fixture_report: CheckovReport) -> None:
    # GIVEN queues consumed only through try(each.value.event_source_arn, null) (cause 6)
    found = verdicts(fixture_report, "i16_cause_6_source_from_each_value")
    # THEN the redrive and visibility rules judge each of them against the entry's function
    assert found == {
        "CKV_OUT_002": (
            {f'module.crawl_worker.{ESM}.this["{key}"]' for key in ("jobs", "short", "nodlq")},
            set(),
        ),
        "CKV_OUT_003": (
            {
                "module.crawl_queue_ok.aws_sqs_queue.this[0]",
                "module.crawl_short_visibility_queue.aws_sqs_queue.this[0]",
            },
            {"module.crawl_queue_without_dlq.aws_sqs_queue.this[0]"},
        ),
        "CKV_OUT_004": (
            {
                "module.crawl_queue_ok.aws_sqs_queue.this[0]",
                "module.crawl_queue_without_dlq.aws_sqs_queue.this[0]",
            },
            {"module.crawl_short_visibility_queue.aws_sqs_queue.this[0]"},
        ),
        "CKV_OUT_007": (
            set(),
            {
                "module.crawl_queue_ok.aws_sqs_queue.dlq[0]",
                "module.crawl_short_visibility_queue.aws_sqs_queue.dlq[0]",
            },
        ),
    }
    details = fixture_report.of("CKV_OUT_004", "i16_cause_6_source_from_each_value").details
    assert details["module.crawl_short_visibility_queue.aws_sqs_queue.this[0]"] == [
        "visibility_timeout_seconds = 60 is below 6 x "
        "module.crawl_worker.aws_lambda_function.this[0].timeout (30 s) = 180 s"
    ]


def test_a_for_each_module_reference_reaches_the_instance_of_its_own_key(
    fixture_report: CheckovReport,
) -> None:
    # GIVEN two for_each module calls over one map, wired by module.ledger_queue[each.key] (cause 4)
    found = verdicts(fixture_report, "i16_cause_4_for_each_module_instances")
    # THEN each queue is compared with its own worker: invoices (30 s) passes, receipts (60 s) fails
    invoices, receipts = (f'module.ledger_queue["{key}"].aws_sqs_queue' for key in ("invoices", "receipts"))
    assert found == {
        "CKV_OUT_002": (
            {f'module.ledger_worker["{key}"].{ESM}.this' for key in ("invoices", "receipts")},
            set(),
        ),
        "CKV_OUT_003": ({f"{invoices}.this[0]", f"{receipts}.this[0]"}, set()),
        "CKV_OUT_004": ({f"{invoices}.this[0]"}, {f"{receipts}.this[0]"}),
        "CKV_OUT_007": (set(), {f"{invoices}.dlq[0]", f"{receipts}.dlq[0]"}),
    }
    details = fixture_report.of("CKV_OUT_004", "i16_cause_4_for_each_module_instances").details
    assert details[f"{receipts}.this[0]"] == [
        "visibility_timeout_seconds = 180 is below 6 x "
        'module.ledger_worker["receipts"].aws_lambda_function.this.timeout (60 s) = 360 s'
    ]


def test_every_result_of_a_conditional_target_arn_is_considered(fixture_report: CheckovReport) -> None:
    # GIVEN rule targets whose arn is an API destination or each.value.arn (the nightly function),
    # rendered by checkov as the API destination only: the "report" entry has no destination, the
    # "partner" entry's destination has no value (cause 5)
    found = verdicts(fixture_report, "i16_cause_5_conditional_target_arn")
    target = "module.nightly_schedule.aws_cloudwatch_event_target.this"
    report, partner = f'{target}["report"]', f'{target}["partner"]'
    # THEN the report target is judged on the function its decided condition chooses, the partner
    # target on both results (the asynchronous-invocation rule for the function, the dead-letter rule
    # failing closed on the result it cannot tell), and the DLQ both name needs its alarm
    assert found == {
        "CKV_OUT_005": (set(), {report, partner}),
        "CKV_OUT_007": (set(), {"module.report_failures.aws_sqs_queue.this[0]"}),
        "CKV_OUT_009": (set(), {partner}),
    }
    assert fixture_report.of("CKV_OUT_005", "i16_cause_5_conditional_target_arn").details[report] == [
        "module.nightly_report.aws_lambda_function.this[0] has no aws_lambda_function_event_invoke_config: "
        "a function error is retried with Lambda's defaults (2 retries, 6 h event age) that nobody chose"
    ]
    details = fixture_report.of("CKV_OUT_009", "i16_cause_5_conditional_target_arn").details[partner]
    assert details[0].startswith("unresolved: arn = 'each.value.arn' cannot be evaluated")


def test_a_dynamic_function_dead_letter_config_counts_whatever_checks_run(
    fixture_report: CheckovReport,
) -> None:
    # GIVEN a function whose dead_letter_config is a dynamic block, invoked by a rule target, and an
    # event invoke config with retries but no destination (cause 8)
    fixture = "i16_cause_8_dynamic_dead_letter_config"
    target = "aws_cloudwatch_event_target.hourly_cleanup_function_dlq_ok"
    # WHEN checkov runs only the project's rules (the shared run)
    found = verdicts(fixture_report, fixture)
    # THEN the function's dead-letter queue counts and the target passes
    assert found == {
        "CKV_OUT_005": ({target}, set()),
        "CKV_OUT_007": (set(), {"module.cleanup_failures.aws_sqs_queue.this[0]"}),
    }
    # AND WHEN checkov runs every check, built-in ones included, THEN the project's rules agree
    everything = run_checkov(FIXTURES / fixture, checks=None)
    custom = {
        (record.check_id, record.resource, record.state)
        for record in everything.records
        if record.check_id in CUSTOM_CHECK_IDS
    }
    assert custom == {
        ("CKV_OUT_005", target, "passed"),
        ("CKV_OUT_007", "module.cleanup_failures.aws_sqs_queue.this[0]", "failed"),
    }


def test_a_mapping_reading_a_module_that_is_not_on_disk_fails_closed(fixture_report: CheckovReport) -> None:
    # GIVEN a mapping whose queue comes from a registry module that was never downloaded (cause 7)
    found = verdicts(fixture_report, "i16_cause_7_registry_module_sources")
    # THEN the mapping rules fail on the unresolved source instead of passing or staying silent
    mapping = f'module.intake_worker.{ESM}.this["intake"]'
    assert found == {
        "CKV_OUT_001": (set(), {mapping}),
        "CKV_OUT_002": (set(), {mapping}),
        "CKV_OUT_008": (set(), {mapping}),
    }
    details = fixture_report.of("CKV_OUT_002", "i16_cause_7_registry_module_sources").details[mapping]
    assert details[0].startswith("unresolved: event_source_arn = 'module.intake_queue.queue_arn'")


def test_a_queue_is_a_dead_letter_queue_only_when_another_queues_redrive_policy_names_it(
    fixture_report: CheckovReport,
) -> None:
    # GIVEN source queues and DLQs from separate calls of one queue module that also declares a
    # (here absent) redrive-policy resource for its own queue (cause 4)
    found = verdicts(fixture_report, "i16_cause_4_redrive_to_another_module_instance")
    # THEN the source queues are judged as consumed queues, not exempted as DLQs, and only the
    # DLQ modules' queues need an alarm
    payments, refunds = (
        "module.payments_queue.aws_sqs_queue.this[0]",
        "module.refunds_queue.aws_sqs_queue.this[0]",
    )
    assert found == {
        "CKV_OUT_002": (
            {f'module.settlement_function.{ESM}.this["{key}"]' for key in ("payments", "refunds")},
            set(),
        ),
        "CKV_OUT_003": ({payments}, {refunds}),
        "CKV_OUT_004": ({payments, refunds}, set()),
        "CKV_OUT_007": (
            {"module.payments_dlq.aws_sqs_queue.this[0]"},
            {"module.refunds_dlq_not_longer_lived.aws_sqs_queue.this[0]"},
        ),
    }
    details = fixture_report.of("CKV_OUT_003", "i16_cause_4_redrive_to_another_module_instance").details
    assert details[refunds] == [
        "dead-letter queue module.refunds_dlq_not_longer_lived.aws_sqs_queue.this[0] keeps messages "
        "345600 s, not longer than the source queue's 345600 s: a moved message keeps its enqueue time "
        "and would expire early"
    ]


def test_a_variable_set_by_its_module_call_is_read_from_the_call_not_reported_unset(
    fixture_report: CheckovReport,
) -> None:
    # GIVEN worker modules whose inputs have no default, set by calls that refer to their queue
    # modules' outputs both ways, so checkov never copies the arguments into the variables (cause 3)
    fixture = "i16_cause_3_caller_set_variable"
    found = verdicts(fixture_report, fixture)
    # THEN the mappings pass on the queue ARN the call passes, and the visibility rule compares the
    # timeout the call passes (60 s): 360 s passes, 300 s fails on the comparison, not on "no value"
    crawl, render = (
        "module.crawl_queue.aws_sqs_queue.this[0]",
        "module.render_queue_short_visibility.aws_sqs_queue.this[0]",
    )
    assert found == {
        "CKV_OUT_002": ({f"module.crawl_worker.{ESM}.this", f"module.render_worker.{ESM}.this"}, set()),
        "CKV_OUT_003": ({crawl, render}, set()),
        "CKV_OUT_004": ({crawl}, {render}),
        "CKV_OUT_007": (
            set(),
            {
                "module.crawl_queue.aws_sqs_queue.dlq[0]",
                "module.render_queue_short_visibility.aws_sqs_queue.dlq[0]",
            },
        ),
    }
    assert fixture_report.of("CKV_OUT_004", fixture).details[render] == [
        "visibility_timeout_seconds = 300 is below 6 x module.render_worker.aws_lambda_function.this.timeout "
        "(60 s) = 360 s"
    ]
