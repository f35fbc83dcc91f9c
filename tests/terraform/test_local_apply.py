"""terraform/environments/local applies on the embedded AWS, and the applied settings read back.

The root is applied twice side by side on one in-process moto server (``local_applies``): once with
the dispatcher function (lambda mode) and once with the EventBridge Pipe (pipe mode, replies on).
Everything asserted below is read back through the AWS APIs, so it is what Terraform actually
created, not what it planned.

MaximumBatchingWindowInSeconds is absent from both mappings because the provider does not send a
window of 0 (AWS's default) at all.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.terraform.local_applies import LAMBDA_ENV, Applied

# Two applies of the local root side by side share the first test's budget (a couple of minutes on a
# quiet machine, most of it the provider's own waits); leave room for a loaded one.
pytestmark = pytest.mark.timeout(600)


BECOMES_PENDING = [
    {
        "dynamodb": {
            "NewImage": {"kind": {"S": ["scrape"]}, "status": {"S": ["Pending"]}},
            "OldImage": {"status": {"S": [{"exists": False}]}},
        },
    },
    {
        "dynamodb": {
            "NewImage": {"kind": {"S": ["scrape"]}, "status": {"S": ["Pending"]}},
            "OldImage": {"status": {"S": [{"anything-but": ["Pending"]}]}},
        },
    },
]


def _canonical(patterns: list[Any]) -> list[str]:
    return sorted(json.dumps(p, sort_keys=True) for p in patterns)


@pytest.fixture
def applied(local_applied: Applied) -> Applied:
    return local_applied


def _pipeline(applied: Applied, mode: str = "lambda") -> dict[str, Any]:
    outputs = applied.lambda_mode if mode == "lambda" else applied.pipe_mode
    value: dict[str, Any] = outputs["pipeline"]
    return value


def _mapping_from(applied: Applied, source_arn: str) -> dict[str, Any]:
    mappings = applied.client("lambda").list_event_source_mappings(EventSourceArn=source_arn)
    [mapping] = mappings["EventSourceMappings"]
    return dict(mapping)


def _queue_arn(applied: Applied, url: str) -> str:
    attributes = applied.client("sqs").get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])
    return str(attributes["Attributes"]["QueueArn"])


def test_stream_mapping_bisects_retries_3_times_and_sends_failures_to_the_bucket(applied: Applied) -> None:
    pipeline = _pipeline(applied)
    mapping = _mapping_from(applied, pipeline["tasks_stream_arn"])

    assert mapping["FunctionArn"].endswith(f":function:{pipeline['dispatcher_function_name']}")
    assert mapping["StartingPosition"] == "TRIM_HORIZON"
    assert mapping["BatchSize"] == 10
    assert mapping["ParallelizationFactor"] == 1
    assert mapping["BisectBatchOnFunctionError"] is True
    assert mapping["MaximumRetryAttempts"] == 3
    assert mapping["MaximumRecordAgeInSeconds"] == 3600
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert mapping["DestinationConfig"] == {
        "OnFailure": {"Destination": f"arn:aws:s3:::{pipeline['dispatch_failure_bucket']}"}
    }
    patterns = [json.loads(f["Pattern"]) for f in mapping["FilterCriteria"]["Filters"]]
    assert _canonical(patterns) == _canonical(BECOMES_PENDING)


def test_queue_mapping_delivers_one_message_at_a_time_to_at_most_140_scrapers(applied: Applied) -> None:
    pipeline = _pipeline(applied)
    mapping = _mapping_from(applied, _queue_arn(applied, pipeline["scrape_queue_url"]))

    assert mapping["FunctionArn"].endswith(f":function:{pipeline['scraper_function_name']}")
    assert mapping["BatchSize"] == 1
    # The provider omits a batching window of 0 (AWS's default) from the request.
    assert mapping.get("MaximumBatchingWindowInSeconds", 0) == 0
    assert mapping["ScalingConfig"] == {"MaximumConcurrency": 140}
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]


def test_scrape_queue_waits_90_minutes_and_redrives_to_a_14_day_dlq_after_3_receives(
    applied: Applied,
) -> None:
    pipeline = _pipeline(applied)
    sqs = applied.client("sqs")
    queue = sqs.get_queue_attributes(QueueUrl=pipeline["scrape_queue_url"], AttributeNames=["All"])[
        "Attributes"
    ]
    dlq = sqs.get_queue_attributes(QueueUrl=pipeline["scrape_dlq_url"], AttributeNames=["All"])["Attributes"]

    assert queue["VisibilityTimeout"] == "5400"
    assert queue["MessageRetentionPeriod"] == "345600"
    assert queue["SqsManagedSseEnabled"] == "true"
    assert json.loads(queue["RedrivePolicy"]) == {
        "deadLetterTargetArn": dlq["QueueArn"],
        "maxReceiveCount": 3,
    }
    assert dlq["MessageRetentionPeriod"] == "1209600"
    assert dlq["SqsManagedSseEnabled"] == "true"
    assert json.loads(dlq["RedriveAllowPolicy"]) == {
        "redrivePermission": "byQueue",
        "sourceQueueArns": [queue["QueueArn"]],
    }


def test_functions_run_with_the_applied_timeouts_memory_tracing_and_concurrency(applied: Applied) -> None:
    pipeline = _pipeline(applied)
    lam = applied.client("lambda")
    scraper = lam.get_function_configuration(FunctionName=pipeline["scraper_function_name"])
    dispatcher = lam.get_function_configuration(FunctionName=pipeline["dispatcher_function_name"])

    assert (scraper["Handler"], scraper["Runtime"]) == ("outreach.scraper.lambda_handler", "python3.12")
    assert (scraper["Timeout"], scraper["MemorySize"]) == (420, 1536)
    assert scraper["TracingConfig"] == {"Mode": "Active"}
    assert (
        lam.get_function_concurrency(FunctionName=pipeline["scraper_function_name"])[
            "ReservedConcurrentExecutions"
        ]
        == 140
    )
    environment = scraper["Environment"]["Variables"]
    assert environment["SCRAPE_QUEUE_URL"] == pipeline["scrape_queue_url"]
    assert environment["SCRAPE_DLQ_URL"] == pipeline["scrape_dlq_url"]
    assert environment["RESULTS_BUCKET"] == pipeline["results_bucket"]
    assert environment["TASKS_TABLE"] == pipeline["tasks_table_name"]
    assert environment["POWERTOOLS_SERVICE_NAME"] == "scraper"

    assert dispatcher["Handler"] == "outreach.dispatcher.lambda_handler"
    assert dispatcher["TracingConfig"] == {"Mode": "Active"}
    assert dispatcher["Environment"]["Variables"]["SCRAPE_QUEUE_URL"] == pipeline["scrape_queue_url"]


def test_tasks_table_streams_both_images_and_has_the_open_tasks_index_ttl_and_pitr(applied: Applied) -> None:
    pipeline = _pipeline(applied)
    dynamodb = applied.client("dynamodb")
    table = dynamodb.describe_table(TableName=pipeline["tasks_table_name"])["Table"]

    assert table["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
    assert table["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    [index] = [i for i in table["GlobalSecondaryIndexes"] if i["IndexName"] == "open-tasks"]
    assert index["KeySchema"] == [
        {"AttributeName": "open_key", "KeyType": "HASH"},
        {"AttributeName": "updated_at", "KeyType": "RANGE"},
    ]
    assert index["Projection"]["ProjectionType"] == "ALL"
    ttl = dynamodb.describe_time_to_live(TableName=pipeline["tasks_table_name"])["TimeToLiveDescription"]
    assert ttl == {"TimeToLiveStatus": "ENABLED", "AttributeName": "expires_at"}
    backups = dynamodb.describe_continuous_backups(TableName=pipeline["tasks_table_name"])
    pitr = backups["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"]
    assert pitr["PointInTimeRecoveryStatus"] == "ENABLED"


def test_tasks_table_has_the_sparse_campaign_open_index_by_campaign_key_and_send_at(applied: Applied) -> None:
    pipeline = _pipeline(applied)
    table = applied.client("dynamodb").describe_table(TableName=pipeline["tasks_table_name"])["Table"]
    [index] = [i for i in table["GlobalSecondaryIndexes"] if i["IndexName"] == "campaign-open"]
    assert index["KeySchema"] == [
        {"AttributeName": "campaign_open_key", "KeyType": "HASH"},
        {"AttributeName": "send_at", "KeyType": "RANGE"},
    ]
    assert index["Projection"]["ProjectionType"] == "ALL"
    assert pipeline["campaign_open_index_name"] == "campaign-open"


def test_buckets_are_private_encrypted_tls_only_and_expire_failure_records(applied: Applied) -> None:
    pipeline = _pipeline(applied)
    s3 = applied.client("s3")
    for bucket in (pipeline["results_bucket"], pipeline["dispatch_failure_bucket"]):
        block = s3.get_public_access_block(Bucket=bucket)["PublicAccessBlockConfiguration"]
        assert all(block.values()) and len(block) == 4
        [rule] = s3.get_bucket_encryption(Bucket=bucket)["ServerSideEncryptionConfiguration"]["Rules"]
        assert rule["ApplyServerSideEncryptionByDefault"]["SSEAlgorithm"] == "AES256"
        [statement] = json.loads(s3.get_bucket_policy(Bucket=bucket)["Policy"])["Statement"]
        assert statement["Effect"] == "Deny"
        assert statement["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    [rule] = s3.get_bucket_lifecycle_configuration(Bucket=pipeline["dispatch_failure_bucket"])["Rules"]
    assert rule["Expiration"] == {"Days": 14}


def test_dlq_and_iterator_age_alarms_notify_the_alarm_topic(applied: Applied) -> None:
    topic = applied.lambda_mode["alarm_topic_arn"]
    names = [
        f"outreach-{LAMBDA_ENV}-scrape-dlq-not-empty",
        f"outreach-{LAMBDA_ENV}-dispatcher-iterator-age",
        f"outreach-{LAMBDA_ENV}-scraper-errors",
        f"outreach-{LAMBDA_ENV}-scraper-throttles",
    ]
    alarms = {
        a["AlarmName"]: a
        for a in applied.client("cloudwatch").describe_alarms(AlarmNames=names)["MetricAlarms"]
    }
    assert sorted(alarms) == sorted(names)
    assert all(a["AlarmActions"] == [topic] for a in alarms.values())
    dlq_alarm = alarms[names[0]]
    assert (dlq_alarm["MetricName"], dlq_alarm["Threshold"]) == ("ApproximateNumberOfMessagesVisible", 1.0)
    assert dlq_alarm["Dimensions"] == [{"Name": "QueueName", "Value": f"outreach-{LAMBDA_ENV}-scrape-dlq"}]


def test_no_role_allows_a_wildcard_action(applied: Applied) -> None:
    iam = applied.client("iam")
    prefix = f"outreach-{LAMBDA_ENV}-"
    roles = [r["RoleName"] for r in iam.list_roles()["Roles"] if r["RoleName"].startswith("outreach-tfapply")]
    assert any(r.startswith(prefix) for r in roles)
    actions: list[str] = []
    for role in roles:
        for name in iam.list_role_policies(RoleName=role)["PolicyNames"]:
            document = iam.get_role_policy(RoleName=role, PolicyName=name)["PolicyDocument"]
            if isinstance(document, str):
                document = json.loads(document)
            for statement in document["Statement"]:
                listed = statement["Action"]
                actions.extend([listed] if isinstance(listed, str) else listed)
    assert actions
    assert [a for a in actions if "*" in a] == []


def test_pipe_mode_moves_records_to_the_queue_with_bisect_finite_retries_and_a_dlq(applied: Applied) -> None:
    pipeline = _pipeline(applied, "pipe")
    pipe = applied.client("pipes").describe_pipe(Name=pipeline["dispatch_pipe_name"])
    parameters = pipe["SourceParameters"]["DynamoDBStreamParameters"]

    assert pipe["CurrentState"] == "RUNNING"
    assert pipe["Source"] == pipeline["tasks_stream_arn"]
    assert pipe["Target"] == _queue_arn(applied, pipeline["scrape_queue_url"])
    assert pipe["TargetParameters"]["InputTemplate"] == '{"task_id": "<$.dynamodb.Keys.task_id.S>"}'
    # each message's group is the tenant its task row names, read from the record (the SQS fair
    # queues tenant; outreach.scrape_tenants)
    group = pipe["TargetParameters"]["SqsQueueParameters"]["MessageGroupId"]
    assert group == "$.dynamodb.NewImage.message_group.S"
    assert parameters["StartingPosition"] == "TRIM_HORIZON"
    assert parameters["BatchSize"] == 10
    assert parameters["MaximumRetryAttempts"] == 3
    assert parameters["MaximumRecordAgeInSeconds"] == 3600
    assert parameters["OnPartialBatchItemFailure"] == "AUTOMATIC_BISECT"
    assert parameters["DeadLetterConfig"]["Arn"] == _queue_arn(applied, pipeline["dispatch_pipe_dlq_url"])
    patterns = [json.loads(f["Pattern"]) for f in pipe["SourceParameters"]["FilterCriteria"]["Filters"]]
    assert _canonical(patterns) == _canonical(BECOMES_PENDING)
    # No dispatcher function and no stream mapping in pipe mode.
    assert pipeline["dispatcher_function_name"] is None
    lam = applied.client("lambda")
    assert (
        lam.list_event_source_mappings(EventSourceArn=pipeline["tasks_stream_arn"])["EventSourceMappings"]
        == []
    )


def _failure_places(applied: Applied, outputs: dict[str, Any]) -> tuple[set[str], set[str]]:
    """ARNs of every queue and bucket the applied environment sends failed work to.

    Found from the applied configuration itself, not from a list kept in the test: queues named as a
    redrive target, mapping on-failure destinations, event invoke config destinations, rule target
    and schedule DLQs and pipe DLQs.
    """
    prefix = outputs["pipeline"]["tasks_table_name"].removesuffix("tasks")
    others = [
        o["pipeline"]["tasks_table_name"].removesuffix("tasks")
        for o in (applied.lambda_mode, applied.pipe_mode)
        if o is not outputs
    ]

    def own(name: str) -> bool:
        """Named after this environment (``outreach-tfapply-`` is also the start of the other's)."""
        return name.startswith(prefix) and not any(name.startswith(o) for o in others if len(o) > len(prefix))

    sqs, lam = applied.client("sqs"), applied.client("lambda")
    events, pipes = applied.client("events"), applied.client("pipes")
    scheduler = applied.client("scheduler")
    places: set[str] = set()
    for url in sqs.list_queues(QueueNamePrefix=prefix).get("QueueUrls", []):
        if not own(url.rsplit("/", 1)[1]):
            continue
        response = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["RedrivePolicy"])
        redrive = response.get("Attributes", {})
        if "RedrivePolicy" in redrive:
            places.add(json.loads(redrive["RedrivePolicy"])["deadLetterTargetArn"])
    for mapping in lam.list_event_source_mappings()["EventSourceMappings"]:
        if own(mapping["FunctionArn"].rsplit(":", 1)[1]):
            destination = mapping.get("DestinationConfig", {}).get("OnFailure", {}).get("Destination")
            if destination:
                places.add(destination)
    for function in lam.list_functions()["Functions"]:
        if not own(function["FunctionName"]):
            continue
        try:
            config = lam.get_function_event_invoke_config(FunctionName=function["FunctionName"])
        except lam.exceptions.ResourceNotFoundException:
            continue
        places.add(config["DestinationConfig"]["OnFailure"]["Destination"])
    for rule in events.list_rules(NamePrefix=prefix)["Rules"]:
        if not own(rule["Name"]):
            continue
        for target in events.list_targets_by_rule(Rule=rule["Name"])["Targets"]:
            places.add(target["DeadLetterConfig"]["Arn"])
    for summary in scheduler.list_schedules(NamePrefix=prefix)["Schedules"]:
        if own(summary["Name"]):
            places.add(scheduler.get_schedule(Name=summary["Name"])["Target"]["DeadLetterConfig"]["Arn"])
    for summary in pipes.list_pipes(NamePrefix=prefix)["Pipes"]:
        if not own(summary["Name"]):
            continue
        pipe = pipes.describe_pipe(Name=summary["Name"])
        places.add(pipe["SourceParameters"]["DynamoDBStreamParameters"]["DeadLetterConfig"]["Arn"])
    queues = {arn for arn in places if arn.startswith("arn:aws:sqs:")}
    buckets = {arn for arn in places if arn.startswith("arn:aws:s3:::")}
    assert queues | buckets == places, places
    return queues, buckets


@pytest.mark.parametrize("mode", ["lambda", "pipe"])
def test_every_failure_place_of_the_environment_alarms_the_alarm_topic(applied: Applied, mode: str) -> None:
    outputs = applied.lambda_mode if mode == "lambda" else applied.pipe_mode
    topic = outputs["alarm_topic_arn"]
    queues, buckets = _failure_places(applied, outputs)
    # every mode has the scrape DLQ, the two reconcilers' DLQs, the email DLQ, the ses-events DLQ
    # (the rule target's dead-letter queue) and the sending guard's DLQ (its rule target's and its
    # own); lambda mode the failure bucket, pipe mode (replies on) the pipe's DLQ and the inbound DLQ
    assert len(queues) == (6 if mode == "lambda" else 8) and len(buckets) == (1 if mode == "lambda" else 0)
    alarms = applied.client("cloudwatch").describe_alarms()["MetricAlarms"]
    for queue in queues:
        name = queue.rsplit(":", 1)[1]
        assert any(
            alarm["Namespace"] == "AWS/SQS"
            and alarm["MetricName"] == "ApproximateNumberOfMessagesVisible"
            and {"Name": "QueueName", "Value": name} in alarm["Dimensions"]
            and alarm["Threshold"] <= 1
            and topic in alarm["AlarmActions"]
            for alarm in alarms
        ), f"{name} has no alarm on its first message that notifies {topic}"
    s3 = applied.client("s3")
    for bucket in buckets:
        notification = s3.get_bucket_notification_configuration(Bucket=bucket.rsplit(":", 1)[1])
        assert any(
            config["TopicArn"] == topic and "s3:ObjectCreated:*" in config["Events"]
            for config in notification.get("TopicConfigurations", [])
        ), f"{bucket} does not notify {topic} of new failure records"


def test_the_scrape_reconciler_runs_every_5_minutes_with_derived_thresholds(applied: Applied) -> None:
    pipeline = _pipeline(applied)
    lam, scheduler, iam = applied.client("lambda"), applied.client("scheduler"), applied.client("iam")
    name = pipeline["scrape_reconciler_function_name"]
    function = lam.get_function_configuration(FunctionName=name)
    schedule = scheduler.get_schedule(Name=pipeline["scrape_reconciler_schedule_arn"].rsplit("/", 1)[1])
    target = schedule["Target"]
    invoke = lam.get_function_event_invoke_config(FunctionName=name)

    assert function["Handler"] == "outreach.reconcilers.scrape.lambda_handler"
    assert function["Timeout"] == 240
    # rate() without a StartDate: the first run comes at once after apply (schedule-types.html)
    assert schedule["ScheduleExpression"] == "rate(5 minutes)" and schedule["State"] == "ENABLED"
    assert schedule.get("StartDate") is None and schedule["FlexibleTimeWindow"] == {"Mode": "OFF"}
    assert target["Arn"] == function["FunctionArn"]
    assert target["RetryPolicy"] == {"MaximumRetryAttempts": 2, "MaximumEventAgeInSeconds": 600}
    assert invoke["MaximumRetryAttempts"] == 2
    assert invoke["DestinationConfig"]["OnFailure"]["Destination"] == target["DeadLetterConfig"]["Arn"]
    environment = function["Environment"]["Variables"]
    assert environment["RECONCILE_PENDING_AFTER_SECONDS"] == str(3600 + 60)
    assert environment["RECONCILE_RUNNING_AFTER_SECONDS"] == str(5400 + 420 + 60)
    assert environment["MAX_TASK_ATTEMPTS"] == "6"
    # the schedule's role may invoke this function and reach the DLQ, nothing else
    role_name = target["RoleArn"].rsplit("/", 1)[1]
    [policy_name] = iam.list_role_policies(RoleName=role_name)["PolicyNames"]
    document = iam.get_role_policy(RoleName=role_name, PolicyName=policy_name)["PolicyDocument"]
    allowed = [(s["Action"], s["Resource"]) for s in document["Statement"]]
    assert allowed == [
        ("lambda:InvokeFunction", function["FunctionArn"]),
        ("sqs:SendMessage", target["DeadLetterConfig"]["Arn"]),
    ]


def test_the_email_stage_applies_with_its_schedule_group_configuration_set_and_event_destination(
    applied: Applied,
) -> None:
    outputs = applied.lambda_mode
    lam, sqs = applied.client("lambda"), applied.client("sqs")
    scheduler, ses = applied.client("scheduler"), applied.client("sesv2")
    assert scheduler.get_schedule_group(Name=outputs["email_schedule_group"])["State"] == "ACTIVE"
    identity = ses.get_email_identity(EmailIdentity=outputs["email_sender_identity"])
    assert identity["ConfigurationSetName"] == outputs["email_configuration_set"]
    [destination] = ses.get_configuration_set_event_destinations(
        ConfigurationSetName=outputs["email_configuration_set"]
    )["EventDestinations"]
    assert destination["Enabled"] and sorted(destination["MatchingEventTypes"]) == [
        "BOUNCE",
        "COMPLAINT",
        "DELIVERY",
        "DELIVERY_DELAY",
        "REJECT",
        "RENDERING_FAILURE",
        "SEND",
    ]
    assert destination["EventBridgeDestination"]["EventBusArn"].endswith(":event-bus/default")
    worker = lam.get_function_configuration(FunctionName=outputs["email_worker_arn"])
    assert worker["Handler"] == "outreach.email_worker.lambda_handler"
    assert worker["Environment"]["Variables"]["EMAIL_CONFIGURATION_SET"] == outputs["email_configuration_set"]
    invoke = lam.get_function_event_invoke_config(FunctionName=outputs["email_worker_arn"])
    assert invoke["MaximumRetryAttempts"] == 2
    assert invoke["DestinationConfig"]["OnFailure"]["Destination"] == outputs["email_dlq_arn"]
    dlq_url = sqs.get_queue_url(QueueName=outputs["email_dlq_arn"].rsplit(":", 1)[1])["QueueUrl"]
    attributes = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["All"])["Attributes"]
    assert attributes["MessageRetentionPeriod"] == "1209600" and attributes["SqsManagedSseEnabled"] == "true"
    reconciler = _pipeline(applied)["email_reconciler_function_name"]
    schedule = applied.client("scheduler").get_schedule(Name=reconciler)
    assert schedule["ScheduleExpression"] == "rate(30 minutes)"
    environment = lam.get_function_configuration(FunctionName=reconciler)["Environment"]["Variables"]
    assert environment["EMAIL_SCHEDULE_GROUP"] == outputs["email_schedule_group"]
    assert environment["EMAIL_SCHEDULER_ROLE_ARN"] == outputs["email_scheduler_role_arn"]


def test_the_configuration_sets_events_reach_the_consumer_through_one_rule_queue_and_mapping(
    applied: Applied,
) -> None:
    outputs, pipeline = applied.lambda_mode, _pipeline(applied)
    events, sqs, lam = applied.client("events"), applied.client("sqs"), applied.client("lambda")
    rule = events.describe_rule(Name=pipeline["ses_events_rule_name"])
    assert rule["EventBusName"] == "default" and rule["State"] == "ENABLED"
    assert json.loads(rule["EventPattern"]) == {
        "source": ["aws.ses"],
        "detail": {"mail": {"tags": {"ses:configuration-set": [outputs["email_configuration_set"]]}}},
    }
    queue_arn = _queue_arn(applied, outputs["ses_events_queue_url"])
    dlq_arn = _queue_arn(applied, outputs["ses_events_dlq_url"])
    [target] = events.list_targets_by_rule(Rule=pipeline["ses_events_rule_name"])["Targets"]
    assert target["Arn"] == queue_arn and target["DeadLetterConfig"] == {"Arn": dlq_arn}
    assert target["RetryPolicy"] == {"MaximumRetryAttempts": 185, "MaximumEventAgeInSeconds": 86400}
    attributes = sqs.get_queue_attributes(QueueUrl=outputs["ses_events_queue_url"], AttributeNames=["All"])
    queue = attributes["Attributes"]
    assert queue["SqsManagedSseEnabled"] == "true" and queue["VisibilityTimeout"] == "360"
    assert json.loads(queue["RedrivePolicy"]) == {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 5}
    [statement] = json.loads(queue["Policy"])["Statement"]
    assert statement["Principal"] == {"Service": "events.amazonaws.com"}
    assert statement["Action"] == "sqs:SendMessage" and statement["Resource"] == queue_arn
    assert statement["Condition"] == {"ArnEquals": {"aws:SourceArn": rule["Arn"]}}
    mapping = _mapping_from(applied, queue_arn)
    assert mapping["FunctionArn"].endswith(f":function:{outputs['ses_event_consumer_function_name']}")
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert mapping["BatchSize"] == 10 and mapping["ScalingConfig"] == {"MaximumConcurrency": 5}
    consumer = lam.get_function_configuration(FunctionName=outputs["ses_event_consumer_function_name"])
    assert consumer["Handler"] == "outreach.ses_event_consumer.lambda_handler"
    environment = consumer["Environment"]["Variables"]
    assert environment["CONTACTS_TABLE"] == outputs["contacts_table_name"]
    assert environment["EMAIL_SCHEDULE_GROUP"] == outputs["email_schedule_group"]
    assert environment["SOFT_BOUNCE_LIMIT"] == "3"


def test_the_unsubscribe_endpoint_is_a_public_function_url_verifying_with_an_hmac_key(
    applied: Applied,
) -> None:
    outputs = applied.lambda_mode
    lam, kms = applied.client("lambda"), applied.client("kms")
    name = outputs["unsubscribe_function_name"]
    url = lam.get_function_url_config(FunctionName=name)
    assert url["AuthType"] == "NONE" and url["InvokeMode"] == "BUFFERED"
    assert url["FunctionUrl"] == outputs["unsubscribe_url"]
    assert outputs["unsubscribe_url"].startswith("https://") and ".lambda-url." in outputs["unsubscribe_url"]
    statements = {s["Sid"]: s for s in json.loads(lam.get_policy(FunctionName=name)["Policy"])["Statement"]}
    public_url = statements["FunctionURLAllowPublicAccess"]
    assert public_url["Action"] == "lambda:InvokeFunctionUrl" and public_url["Principal"] == "*"
    assert public_url["Condition"] == {"StringEquals": {"lambda:FunctionUrlAuthType": "NONE"}}
    assert statements["FunctionURLInvokeAllowPublicAccess"]["Action"] == "lambda:InvokeFunction"
    key = kms.describe_key(KeyId=outputs["unsubscribe_key_arn"])["KeyMetadata"]
    assert key["KeySpec"] == "HMAC_256" and key["KeyUsage"] == "GENERATE_VERIFY_MAC"
    function = lam.get_function_configuration(FunctionName=name)
    assert function["Handler"] == "outreach.unsubscribe.endpoint.lambda_handler"
    environment = function["Environment"]["Variables"]
    assert environment["UNSUBSCRIBE_KEY_ID"] == outputs["unsubscribe_key_arn"]
    assert environment["CONTACT_EVENTS_QUEUE_URL"] == outputs["ses_events_queue_url"]
    assert environment["CONTACTS_TABLE"] == outputs["contacts_table_name"]
    reserved = lam.get_function_concurrency(FunctionName=name)["ReservedConcurrentExecutions"]
    assert reserved == 10


def test_the_contact_ledger_and_the_recipient_index_apply_as_the_modules_declare(applied: Applied) -> None:
    outputs, pipeline = applied.lambda_mode, _pipeline(applied)
    dynamodb = applied.client("dynamodb")
    ledger = dynamodb.describe_table(TableName=outputs["contacts_table_name"])["Table"]
    assert ledger["KeySchema"] == [{"AttributeName": "contact_key", "KeyType": "HASH"}]
    assert not ledger.get("StreamSpecification", {}).get("StreamEnabled", False)
    assert not ledger.get("GlobalSecondaryIndexes")
    assert ledger["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    tasks = dynamodb.describe_table(TableName=pipeline["tasks_table_name"])["Table"]
    [index] = [i for i in tasks["GlobalSecondaryIndexes"] if i["IndexName"] == "recipient-emails"]
    assert index["KeySchema"] == [{"AttributeName": "recipient_key", "KeyType": "HASH"}]
    assert index["Projection"] == {"ProjectionType": "KEYS_ONLY"}
