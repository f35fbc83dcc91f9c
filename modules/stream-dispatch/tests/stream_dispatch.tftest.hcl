mock_provider "aws" {
  source          = "../../tests/terraform/mocks"
  override_during = plan
}

override_resource {
  target          = module.failure_bucket[0].aws_s3_bucket.this
  override_during = plan
  values = {
    id  = "outreach-test-failures"
    arn = "arn:aws:s3:::outreach-test-failures"
  }
}

override_resource {
  target          = module.dispatcher[0].aws_lambda_function.this
  override_during = plan
  values = {
    arn = "arn:aws:lambda:eu-central-1:111122223333:function:outreach-test-dispatcher"
  }
}

override_resource {
  target          = module.pipe_dlq[0].aws_sqs_queue.this
  override_during = plan
  values = {
    arn = "arn:aws:sqs:eu-central-1:111122223333:outreach-test-dispatch-dlq"
    url = "https://sqs.eu-central-1.amazonaws.com/111122223333/outreach-test-dispatch-dlq"
  }
}

override_resource {
  target          = aws_iam_role.pipe[0]
  override_during = plan
  values = {
    arn = "arn:aws:iam::111122223333:role/outreach-test-dispatch-pipe-role"
  }
}

variables {
  name_prefix = "outreach-test"
  tasks_table = {
    name       = "outreach-test-tasks"
    arn        = "arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-tasks"
    stream_arn = "arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-tasks/stream/2026-01-01T00:00:00.000"
  }
  scrape_queue = {
    url = "https://sqs.eu-central-1.amazonaws.com/111122223333/outreach-test-scrape"
    arn = "arn:aws:sqs:eu-central-1:111122223333:outreach-test-scrape"
  }
  handler                        = "outreach.dispatcher.lambda_handler"
  package_path                   = "../../tests/terraform/fixtures/packages/dispatcher.zip"
  failure_bucket_name            = "outreach-test-failures"
  powertools_metrics_namespace   = "OutreachPipeline/test"
  alarm_actions                  = ["arn:aws:sns:eu-central-1:111122223333:outreach-test-alarms"]
  failure_notification_topic_arn = "arn:aws:sns:eu-central-1:111122223333:outreach-test-alarms"
}

run "lambda_mode_planned_with_the_files_variables" {
  command = plan

  # filter_passes_an_insert_of_a_pending_scrape_task
  assert {
    condition = jsondecode(output.filter_patterns[0]) == {
      dynamodb = {
        NewImage = { kind = { S = ["scrape"] }, status = { S = ["Pending"] } }
        OldImage = { status = { S = [{ exists = false }] } }
      }
    }
    error_message = "An INSERT (no old image) of a scrape task in status Pending must pass the filter."
  }

  # filter_passes_a_modify_that_makes_a_scrape_task_pending
  assert {
    condition = jsondecode(output.filter_patterns[1]) == {
      dynamodb = {
        NewImage = { kind = { S = ["scrape"] }, status = { S = ["Pending"] } }
        OldImage = { status = { S = [{ "anything-but" = ["Pending"] }] } }
      }
    }
    error_message = "A MODIFY whose new image is a Pending scrape task and whose old image was not Pending must pass."
  }

  assert {
    condition     = length(output.filter_patterns) == 2
    error_message = "Nothing else may pass the filter."
  }

  assert {
    condition     = alltrue([for p in output.filter_patterns : keys(jsondecode(p)) == ["dynamodb"]])
    error_message = "DynamoDB event source mappings filter on the dynamodb key only."
  }

  # lambda_mode_reads_the_stream_from_trim_horizon_in_batches_of_10
  assert {
    condition = (
      aws_lambda_event_source_mapping.stream[0].event_source_arn == var.tasks_table.stream_arn &&
      aws_lambda_event_source_mapping.stream[0].function_name == "arn:aws:lambda:eu-central-1:111122223333:function:outreach-test-dispatcher"
    )
    error_message = "The mapping reads the tasks stream into the dispatcher."
  }

  assert {
    condition     = aws_lambda_event_source_mapping.stream[0].starting_position == "TRIM_HORIZON"
    error_message = "Start at TRIM_HORIZON so records written before the mapping existed are not skipped."
  }

  assert {
    condition     = aws_lambda_event_source_mapping.stream[0].batch_size == 10 && aws_lambda_event_source_mapping.stream[0].parallelization_factor == 1
    error_message = "The mapping reads batches of 10, one batch per shard at a time."
  }

  # lambda_mode_bisects_and_retries_a_bounded_number_of_times_within_a_bounded_age
  assert {
    condition     = aws_lambda_event_source_mapping.stream[0].bisect_batch_on_function_error == true
    error_message = "A failed batch must be split to isolate the bad record."
  }

  assert {
    condition     = aws_lambda_event_source_mapping.stream[0].maximum_retry_attempts == 3
    error_message = "Retries must be finite (3), never -1."
  }

  assert {
    condition     = aws_lambda_event_source_mapping.stream[0].maximum_record_age_in_seconds == 3600
    error_message = "Record age must be finite (3600 s), never -1."
  }

  assert {
    condition     = aws_lambda_event_source_mapping.stream[0].function_response_types == toset(["ReportBatchItemFailures"])
    error_message = "ReportBatchItemFailures must be on so the handler can checkpoint at its first failed record."
  }

  # lambda_mode_filters_to_tasks_becoming_pending
  assert {
    condition = toset([
      for f in one(aws_lambda_event_source_mapping.stream[0].filter_criteria).filter : f.pattern
    ]) == toset(output.filter_patterns)
    error_message = "The mapping must filter with exactly the becomes-Pending patterns."
  }

  # lambda_mode_sends_exhausted_batches_to_the_failure_bucket
  assert {
    condition     = one(one(aws_lambda_event_source_mapping.stream[0].destination_config).on_failure).destination_arn == "arn:aws:s3:::outreach-test-failures"
    error_message = "Exhausted batches go to the S3 failure bucket (records included)."
  }

  assert {
    condition     = output.failure_bucket_name == "outreach-test-failures"
    error_message = "The failure bucket is created in lambda mode."
  }

  # lambda_mode_notifies_the_alarm_topic_of_every_failure_record
  assert {
    condition = (
      one(aws_s3_bucket_notification.failure_records[0].topic).topic_arn == "arn:aws:sns:eu-central-1:111122223333:outreach-test-alarms" &&
      one(aws_s3_bucket_notification.failure_records[0].topic).events == toset(["s3:ObjectCreated:*"])
    )
    error_message = "Every object written to the failure bucket notifies the alarm topic."
  }

  # dispatch_horizon_is_the_record_age_plus_one_dispatcher_timeout
  assert {
    condition     = output.dispatch_horizon_seconds == 3600 + 60
    error_message = "A Pending task older than the maximum record age plus one invocation can no longer be dispatched by the stream."
  }

  # lambda_mode_dispatcher_policy_names_its_stream_queue_and_bucket
  assert {
    condition = {
      for s in jsondecode(output.dispatcher_policy_json).Statement : s.Sid => [s.Action, s.Resource] if !contains(["WriteOwnLogs", "WriteTraces"], s.Sid)
      } == {
      ReadTaskStream     = [["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"], [var.tasks_table.stream_arn]]
      ListTaskStreams    = [["dynamodb:ListStreams"], ["arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-tasks/stream/*"]]
      SendScrapeMessages = [["sqs:SendMessage"], [var.scrape_queue.arn]]
      WriteFailedBatches = [["s3:PutObject"], ["arn:aws:s3:::outreach-test-failures/*"]]
      ListFailureBucket  = [["s3:ListBucket"], ["arn:aws:s3:::outreach-test-failures"]]
    }
    error_message = "The dispatcher's policy must name exactly its stream, the scrape queue and the failure bucket."
  }

  assert {
    condition = (
      output.dispatcher_settings.handler == "outreach.dispatcher.lambda_handler" &&
      output.dispatcher_settings.environment.TASKS_TABLE == "outreach-test-tasks" &&
      output.dispatcher_settings.environment.SCRAPE_QUEUE_URL == var.scrape_queue.url &&
      output.dispatcher_settings.tracing_mode == "Active"
    )
    error_message = "The dispatcher runs its handler with the table and queue in its environment."
  }

  # lambda_mode_alarms_on_iterator_age
  assert {
    condition = (
      aws_cloudwatch_metric_alarm.iterator_age[0].metric_name == "IteratorAge" &&
      aws_cloudwatch_metric_alarm.iterator_age[0].dimensions.FunctionName == "outreach-test-dispatcher" &&
      aws_cloudwatch_metric_alarm.iterator_age[0].statistic == "Maximum" &&
      aws_cloudwatch_metric_alarm.iterator_age[0].threshold == 300000 &&
      aws_cloudwatch_metric_alarm.iterator_age[0].alarm_actions == toset(var.alarm_actions)
    )
    error_message = "An IteratorAge alarm on the dispatcher must notify the topic."
  }

  assert {
    condition     = length(aws_pipes_pipe.dispatch) == 0 && length(module.pipe_dlq) == 0
    error_message = "Lambda mode creates no pipe."
  }

  # lambda_mode_needs_no_pipe_wait
  assert {
    condition     = length(terraform_data.pipe_source_settle) == 0
    error_message = "Only pipe mode waits."
  }
}

run "pipe_mode_moves_records_through_the_template_bisects_retries_finitely_and_has_an_alarmed_dlq" {
  command = plan

  variables {
    dispatch_mode = "pipe"
    package_path  = null
  }

  # pipe_mode_moves_stream_records_to_the_queue_through_the_template
  assert {
    condition = (
      aws_pipes_pipe.dispatch[0].source == var.tasks_table.stream_arn &&
      aws_pipes_pipe.dispatch[0].target == var.scrape_queue.arn &&
      aws_pipes_pipe.dispatch[0].desired_state == "RUNNING"
    )
    error_message = "The pipe runs from the tasks stream to the scrape queue."
  }

  assert {
    condition     = one(aws_pipes_pipe.dispatch[0].target_parameters).input_template == "{\"task_id\": \"<$.dynamodb.Keys.task_id.S>\"}"
    error_message = "The pipe must turn each record into {\"task_id\": ...}."
  }

  assert {
    condition     = one(one(aws_pipes_pipe.dispatch[0].target_parameters).sqs_queue_parameters).message_group_id == "$.dynamodb.NewImage.message_group.S"
    error_message = "Each message's group must be the tenant its task row names (the SQS fair queues tenant), as the dispatcher sends it."
  }

  assert {
    condition = toset([
      for f in one(one(aws_pipes_pipe.dispatch[0].source_parameters).filter_criteria).filter : f.pattern
    ]) == toset(output.filter_patterns)
    error_message = "The pipe must filter with exactly the becomes-Pending patterns."
  }

  assert {
    condition     = length(aws_lambda_event_source_mapping.stream) == 0 && output.dispatcher_function_name == null
    error_message = "Pipe mode creates no dispatcher function or mapping."
  }

  # pipe_mode_bisects_retries_finitely_and_has_a_dlq_with_an_alarm
  assert {
    condition = (
      one(one(aws_pipes_pipe.dispatch[0].source_parameters).dynamodb_stream_parameters).starting_position == "TRIM_HORIZON" &&
      one(one(aws_pipes_pipe.dispatch[0].source_parameters).dynamodb_stream_parameters).batch_size == 10 &&
      one(one(aws_pipes_pipe.dispatch[0].source_parameters).dynamodb_stream_parameters).maximum_retry_attempts == 3 &&
      one(one(aws_pipes_pipe.dispatch[0].source_parameters).dynamodb_stream_parameters).maximum_record_age_in_seconds == 3600 &&
      one(one(aws_pipes_pipe.dispatch[0].source_parameters).dynamodb_stream_parameters).on_partial_batch_item_failure == "AUTOMATIC_BISECT"
    )
    error_message = "The pipe reads from TRIM_HORIZON in batches of 10 with 3 retries, a 3600 s record age and automatic bisect."
  }

  assert {
    condition     = one(one(one(aws_pipes_pipe.dispatch[0].source_parameters).dynamodb_stream_parameters).dead_letter_config).arn == "arn:aws:sqs:eu-central-1:111122223333:outreach-test-dispatch-dlq"
    error_message = "Records the pipe gives up on go to its own DLQ."
  }

  assert {
    # Encryption and the alarm's metric and threshold are modules/dead-letter-queue's (tested there).
    condition = (
      module.pipe_dlq[0].name == "outreach-test-dispatch-dlq" &&
      module.pipe_dlq[0].message_retention_seconds == 1209600 &&
      module.pipe_dlq[0].alarm_name == "outreach-test-dispatch-dlq-not-empty" &&
      output.alarm_arns == [module.pipe_dlq[0].alarm_arn]
    )
    error_message = "The pipe DLQ keeps 14 days and alarms on its first message."
  }

  assert {
    condition = {
      for s in jsondecode(output.pipe_policy_json).Statement : s.Sid => [s.Action, s.Resource]
      } == {
      ReadTaskStream       = [["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"], [var.tasks_table.stream_arn]]
      ListTaskStreams      = [["dynamodb:ListStreams"], ["arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-tasks/stream/*"]]
      SendScrapeMessages   = [["sqs:SendMessage"], [var.scrape_queue.arn]]
      SendUndeliveredToDlq = [["sqs:SendMessage"], ["arn:aws:sqs:eu-central-1:111122223333:outreach-test-dispatch-dlq"]]
    }
    error_message = "The pipe's policy must name exactly its stream, the scrape queue and its DLQ."
  }

  assert {
    condition     = jsondecode(aws_iam_role.pipe[0].assume_role_policy).Statement[0].Condition.StringEquals["aws:SourceAccount"] == "111122223333"
    error_message = "Only pipes of this account may assume the pipe role."
  }
}

run "each_refused_input_fails_its_own_validation_1" {
  command = plan

  variables {
    # rejects_an_unknown_dispatch_mode
    dispatch_mode = "kinesis"
  }

  expect_failures = [
    var.dispatch_mode,
  ]
}

run "each_refused_input_fails_its_own_validation_2" {
  command = plan

  variables {
    # rejects_unlimited_retries
    stream = { maximum_retry_attempts = -1 }
    # rejects_lambda_mode_without_a_package
    package_path = null
  }

  expect_failures = [
    var.stream,
    var.package_path,
  ]
}

run "each_refused_input_fails_its_own_validation_3" {
  command = plan

  variables {
    # rejects_more_than_10000_retries
    stream = { maximum_retry_attempts = 10001 }
  }

  expect_failures = [
    var.stream,
  ]
}

run "each_refused_input_fails_its_own_validation_4" {
  command = plan

  variables {
    # rejects_unlimited_record_age
    stream = { maximum_record_age_in_seconds = -1 }
  }

  expect_failures = [
    var.stream,
  ]
}

run "each_refused_input_fails_its_own_validation_5" {
  command = plan

  variables {
    # rejects_a_record_age_above_604800
    stream = { maximum_record_age_in_seconds = 604801 }
  }

  expect_failures = [
    var.stream,
  ]
}

run "each_refused_input_fails_its_own_validation_6" {
  command = plan

  variables {
    # rejects_an_empty_batch
    stream = { batch_size = 0 }
  }

  expect_failures = [
    var.stream,
  ]
}

run "each_refused_input_fails_its_own_validation_7" {
  command = plan

  variables {
    # rejects_a_pipe_batch_larger_than_an_sqs_target_takes
    dispatch_mode = "pipe"
    package_path  = null
    stream        = { batch_size = 11 }
  }

  expect_failures = [
    var.stream,
  ]
}

run "each_refused_input_fails_its_own_validation_8" {
  command = plan

  variables {
    # rejects_an_unsupported_starting_position
    stream = { starting_position = "AT_TIMESTAMP" }
  }

  expect_failures = [
    var.stream,
  ]
}

run "each_refused_input_fails_its_own_validation_9" {
  command = plan

  variables {
    # rejects_a_parallelization_factor_above_10
    stream = { parallelization_factor = 11 }
  }

  expect_failures = [
    var.stream,
  ]
}

run "pipe_mode_waits_once_for_the_role_and_stream_before_creating_the_pipe" {
  command = plan

  variables {
    dispatch_mode = "pipe"
  }

  assert {
    condition     = length(terraform_data.pipe_source_settle) == 1
    error_message = "In pipe mode the pipe waits for IAM to settle (provider issue 40572)."
  }
}
