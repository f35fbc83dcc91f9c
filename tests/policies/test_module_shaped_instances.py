"""The CKV_OUT_* policies on roots calling EventBridge and Lambda modules the way their users do.

The fixtures ``i29_shape_*`` call ``registry_shaped_modules/`` (written in the style of the public
``terraform-aws-eventbridge`` and ``terraform-aws-lambda`` modules: targets and schedules built from
``flatten([...])`` locals, ``create``/``create_*`` switches, maps of pipes and of event source
mappings whose blocks are ``dynamic``, an alias module keeping its ARN in a local). Every verdict of
each root is asserted exactly; each key of a ``for_each`` is its own resource, ``resource["key"]``.
"""

from __future__ import annotations

from tests.policies.checkov_report import CheckovReport
from tests.policies.test_registry_shaped_terraform import verdicts

ESM = "aws_lambda_event_source_mapping"


def test_targets_schedules_and_pipes_that_an_apply_would_not_create_get_no_verdict(
    fixture_report: CheckovReport,
) -> None:
    # GIVEN the EventBridge module switched off with create = false, with every create_* switch
    # false, and called with rules only (no targets, schedules or pipes)
    found = verdicts(fixture_report, "i29_shape_1_zero_instances")
    # THEN no rule judges a target, schedule or pipe of theirs (nothing else in the root is judged)
    assert found == {}


def test_each_key_of_a_map_of_pipes_is_judged_by_the_rule_of_its_own_source(
    fixture_report: CheckovReport,
) -> None:
    # GIVEN one pipe map holding a complete stream pipe, an SQS pipe and a stream pipe without bisect
    found = verdicts(fixture_report, "i29_shape_2_each_key_on_its_own")
    pipe = "module.ledger_pipes.aws_pipes_pipe.this"
    # THEN the stream rule judges the two stream keys on their own and leaves the SQS key alone
    assert found["CKV_OUT_006"] == ({f'{pipe}["ledger_stream"]'}, {f'{pipe}["ledger_stream_without_bisect"]'})
    assert fixture_report.of("CKV_OUT_006", "i29_shape_2_each_key_on_its_own").details[
        f'{pipe}["ledger_stream_without_bisect"]'
    ] == [
        "source_parameters.dynamodb_stream_parameters.on_partial_batch_item_failure is not set: "
        "failed batches are not split; set AUTOMATIC_BISECT"
    ]


def test_each_mapping_of_the_lambda_modules_map_is_judged_by_the_rule_of_its_source(
    fixture_report: CheckovReport,
) -> None:
    # GIVEN one event_source_mapping map holding a complete stream mapping and an SQS mapping
    found = verdicts(fixture_report, "i29_shape_2_each_key_on_its_own")
    mapping = f"module.ledger_worker.{ESM}.this"
    # THEN the stream rules judge only the stream key, the SQS rule only the SQS key, and both pass
    assert found["CKV_OUT_001"] == ({f'{mapping}["ledger_stream"]'}, set())
    assert found["CKV_OUT_008"] == ({f'{mapping}["ledger_stream"]'}, set())
    assert found["CKV_OUT_002"] == ({f'{mapping}["ledger_queue"]'}, set())


def test_a_queue_consumed_through_a_map_of_mappings_keeps_its_consumer(fixture_report: CheckovReport) -> None:
    # GIVEN a queue without DLQ and with 60 s visibility, consumed by the map's SQS key (30 s function)
    found = verdicts(fixture_report, "i29_shape_2_each_key_on_its_own")
    queue = "module.ledger_queue_without_dlq.aws_sqs_queue.this[0]"
    # THEN its redrive and its visibility are judged against that consumer, and both fail
    assert found["CKV_OUT_003"] == (set(), {queue})
    assert found["CKV_OUT_004"] == (set(), {queue})
    assert fixture_report.of("CKV_OUT_004", "i29_shape_2_each_key_on_its_own").details[queue] == [
        "visibility_timeout_seconds = 60 is below 6 x "
        "module.ledger_worker.aws_lambda_function.this[0].timeout (30 s) = 180 s"
    ]


def test_a_dead_letter_queue_named_in_a_dynamic_block_of_a_for_each_target_needs_its_alarm(
    fixture_report: CheckovReport,
) -> None:
    # GIVEN a rule target built from the module's flatten([...]) local whose dead_letter_config is a
    # dynamic block naming a queue without alarm, beside an alarmed on-failure queue
    found = verdicts(fixture_report, "i29_shape_2_each_key_on_its_own")
    # THEN the target is judged as its own key and passes, and the unalarmed DLQ fails
    assert found["CKV_OUT_005"] == (
        {'module.ledger_report_bus.aws_cloudwatch_event_target.this["ledger-report"]'},
        set(),
    )
    assert found["CKV_OUT_007"] == (
        {"aws_sqs_queue.stream_failures"},
        {"aws_sqs_queue.report_failures_without_alarm"},
    )
    # AND the DLQ's details name the target's key that uses it
    details = fixture_report.of("CKV_OUT_007", "i29_shape_2_each_key_on_its_own").details
    assert details["aws_sqs_queue.report_failures_without_alarm"] == [
        'dead-letter queue of module.ledger_report_bus.aws_cloudwatch_event_target.this["ledger-report"] has '
        "no aws_cloudwatch_metric_alarm on AWS/SQS ApproximateNumberOfMessagesVisible with "
        "dimensions.QueueName naming it"
    ]
    # AND nothing else in the root is judged
    assert set(found) == {
        "CKV_OUT_001",
        "CKV_OUT_002",
        "CKV_OUT_003",
        "CKV_OUT_004",
        "CKV_OUT_005",
        "CKV_OUT_006",
        "CKV_OUT_007",
        "CKV_OUT_008",
    }


def test_a_consumer_named_through_an_alias_or_a_qualified_arn_is_compared_with_its_function(
    fixture_report: CheckovReport,
) -> None:
    # GIVEN a mapping in the alias module naming local.alias_arn (an alias given the function's name as
    # text) and a root mapping naming a qualified ARN held in a local, both for the 30 s function
    found = verdicts(fixture_report, "i29_shape_3_consumer_through_an_alias")
    # THEN the 180 s queue passes and the 120 s queue fails on the comparison itself
    assert found == {
        "CKV_OUT_002": (
            {
                f"{ESM}.summary_through_qualified_arn",
                f'module.digest_live_alias.{ESM}.this["digest"]',
            },
            set(),
        ),
        "CKV_OUT_003": ({"aws_sqs_queue.digest", "aws_sqs_queue.summary_short_visibility"}, set()),
        "CKV_OUT_004": ({"aws_sqs_queue.digest"}, {"aws_sqs_queue.summary_short_visibility"}),
        "CKV_OUT_007": ({"aws_sqs_queue.digest_failures"}, set()),
    }
    assert fixture_report.of("CKV_OUT_004", "i29_shape_3_consumer_through_an_alias").details[
        "aws_sqs_queue.summary_short_visibility"
    ] == [
        "visibility_timeout_seconds = 120 is below 6 x "
        "module.digest_function.aws_lambda_function.this[0].timeout (30 s) = 180 s"
    ]


def test_a_rule_target_that_exists_when_its_condition_holds_is_judged_on_its_lambda(
    fixture_report: CheckovReport,
) -> None:
    # GIVEN targets counted on a condition (their ARN chosen by the same condition) and a module
    # target list filtered by a condition, all invoking a function without retry, DLQ or invoke config
    found = verdicts(fixture_report, "i29_shape_4_conditional_rule_target")
    # THEN the targets whose condition holds fail the asynchronous-invocation rule on the function,
    # the non-Lambda rule does not judge them, and the targets whose condition fails get nothing
    nightly = "aws_cloudwatch_event_target.nightly_export"
    weekly = 'module.export_bus.aws_cloudwatch_event_target.this["weekly-export"]'
    assert found == {"CKV_OUT_005": (set(), {nightly, weekly})}
    details = fixture_report.of("CKV_OUT_005", "i29_shape_4_conditional_rule_target").details
    expected = [
        "retry_policy is missing: failed deliveries to Lambda fall back to the service defaults",
        "dead_letter_config is missing: an event that cannot be delivered is dropped",
        "aws_lambda_function.export has no aws_lambda_function_event_invoke_config: a function error is "
        "retried with Lambda's defaults (2 retries, 6 h event age) that nobody chose",
    ]
    assert details[nightly] == expected
    assert details[weekly] == expected


def test_a_for_each_that_cannot_be_known_fails_closed_naming_its_expression(
    fixture_report: CheckovReport,
) -> None:
    # GIVEN the module's targets read from a file (jsondecode(file(...)) is not evaluated)
    fixture = "i29_shape_5_instances_that_cannot_be_known"
    found = verdicts(fixture_report, fixture)
    target = "module.partner_bus.aws_cloudwatch_event_target.this"
    # THEN the target is judged as one resource and fails closed
    assert found == {"CKV_OUT_005": (set(), {target}), "CKV_OUT_009": (set(), {target})}
    # AND the details say which expression left its instances unknown, and why
    for check_id in ("CKV_OUT_005", "CKV_OUT_009"):
        assert fixture_report.of(check_id, fixture).details[target][-1] == (
            "instances unknown, judged as one resource: for_each = { for k, v in local.eventbridge_targets "
            ": v.name => v if var.create && var.create_targets } cannot be evaluated "
            "(var.targets has no known value)"
        )
