mock_provider "aws" {
  source          = "../../tests/terraform/mocks"
  override_during = plan
}

override_resource {
  target          = aws_sqs_queue.this
  override_during = plan
  values = {
    arn = "arn:aws:sqs:eu-central-1:111122223333:outreach-test-scrape-dlq"
    url = "https://sqs.eu-central-1.amazonaws.com/111122223333/outreach-test-scrape-dlq"
  }
}

variables {
  name                      = "outreach-test-scrape-dlq"
  message_retention_seconds = 1209600
  redrive_source_queue_arns = ["arn:aws:sqs:eu-central-1:111122223333:outreach-test-scrape"]
  alarm_description         = "A scrape message exhausted its receives and is waiting in outreach-test-scrape-dlq."
  alarm_actions             = ["arn:aws:sns:eu-central-1:111122223333:outreach-test-alarms"]
}

run "the_dead_letter_queue_planned_with_the_files_variables" {
  command = plan

  # queue_keeps_its_messages_encrypted_for_the_retention_given
  assert {
    condition     = aws_sqs_queue.this.name == "outreach-test-scrape-dlq" && output.name == "outreach-test-scrape-dlq"
    error_message = "The queue takes the name given."
  }

  assert {
    condition     = aws_sqs_queue.this.message_retention_seconds == 1209600 && output.message_retention_seconds == 1209600
    error_message = "The queue keeps messages for message_retention_seconds."
  }

  assert {
    condition     = aws_sqs_queue.this.sqs_managed_sse_enabled && aws_sqs_queue.this.kms_master_key_id == null
    error_message = "The queue is encrypted with SQS managed keys (SSE-SQS), not a KMS key."
  }

  assert {
    condition = (
      output.arn == "arn:aws:sqs:eu-central-1:111122223333:outreach-test-scrape-dlq" &&
      output.url == "https://sqs.eu-central-1.amazonaws.com/111122223333/outreach-test-scrape-dlq"
    )
    error_message = "arn and url are the queue's."
  }

  # redrive_allow_policy_accepts_only_the_source_queues
  assert {
    condition = jsondecode(aws_sqs_queue.this.redrive_allow_policy) == {
      redrivePermission = "byQueue"
      sourceQueueArns   = ["arn:aws:sqs:eu-central-1:111122223333:outreach-test-scrape"]
    }
    error_message = "With redrive sources the queue accepts messages redriven from them only."
  }

  assert {
    condition     = output.redrive_allow_policy == aws_sqs_queue.this.redrive_allow_policy
    error_message = "redrive_allow_policy is the queue's policy."
  }

  # alarm_fires_on_the_first_visible_message_and_notifies_the_topic
  assert {
    condition = (
      aws_cloudwatch_metric_alarm.this.alarm_name == "outreach-test-scrape-dlq-not-empty" &&
      aws_cloudwatch_metric_alarm.this.alarm_description == "A scrape message exhausted its receives and is waiting in outreach-test-scrape-dlq." &&
      output.alarm_name == "outreach-test-scrape-dlq-not-empty"
    )
    error_message = "The alarm is named <queue>-not-empty and carries the description given."
  }

  assert {
    condition = (
      aws_cloudwatch_metric_alarm.this.namespace == "AWS/SQS" &&
      aws_cloudwatch_metric_alarm.this.metric_name == "ApproximateNumberOfMessagesVisible" &&
      aws_cloudwatch_metric_alarm.this.dimensions == tomap({ QueueName = "outreach-test-scrape-dlq" }) &&
      aws_cloudwatch_metric_alarm.this.statistic == "Maximum" &&
      aws_cloudwatch_metric_alarm.this.period == 60 &&
      aws_cloudwatch_metric_alarm.this.evaluation_periods == 1 &&
      aws_cloudwatch_metric_alarm.this.threshold == 1 &&
      aws_cloudwatch_metric_alarm.this.comparison_operator == "GreaterThanOrEqualToThreshold" &&
      aws_cloudwatch_metric_alarm.this.treat_missing_data == "notBreaching"
    )
    error_message = "The alarm watches the queue's visible messages, maximum over one minute, and fires at 1."
  }

  assert {
    condition = (
      aws_cloudwatch_metric_alarm.this.alarm_actions == toset(["arn:aws:sns:eu-central-1:111122223333:outreach-test-alarms"]) &&
      aws_cloudwatch_metric_alarm.this.ok_actions == toset(["arn:aws:sns:eu-central-1:111122223333:outreach-test-alarms"])
    )
    error_message = "The alarm notifies the topic when it fires and when the queue is empty again."
  }
}

run "without_redrive_sources_there_is_no_redrive_allow_policy" {
  command = plan

  variables {
    name                      = "outreach-test-email-dlq"
    redrive_source_queue_arns = []
  }

  assert {
    # The argument is optional and computed, so the mock fills it in; it must not be a byQueue policy.
    condition     = !strcontains(coalesce(aws_sqs_queue.this.redrive_allow_policy, "-"), "byQueue") && output.redrive_allow_policy == null
    error_message = "A queue without redrive sources has no redrive allow policy."
  }
}

run "each_refused_input_fails_its_own_validation_1" {
  command = plan

  variables {
    # rejects_a_name_sqs_refuses
    name = "outreach-test.dlq"
    # rejects_a_retention_under_a_minute
    message_retention_seconds = 59
    # rejects_more_than_10_redrive_sources
    redrive_source_queue_arns = [for i in range(11) : "arn:aws:sqs:eu-central-1:111122223333:outreach-test-q${i}"]
    # rejects_an_alarm_description_over_1024_characters
    alarm_description = "${join("", [for i in range(1000) : "x"])}${join("", [for i in range(25) : "x"])}"
  }

  expect_failures = [
    var.name,
    var.message_retention_seconds,
    var.redrive_source_queue_arns,
    var.alarm_description,
  ]
}

run "each_refused_input_fails_its_own_validation_2" {
  command = plan

  variables {
    # rejects_a_name_longer_than_80_characters
    name = "outreach-test-${join("", [for i in range(70) : "x"])}"
    # rejects_a_retention_over_14_days
    message_retention_seconds = 1209601
    # rejects_a_redrive_source_that_is_no_queue_arn
    redrive_source_queue_arns = ["outreach-test-scrape"]
  }

  expect_failures = [
    var.name,
    var.message_retention_seconds,
    var.redrive_source_queue_arns,
  ]
}
