mock_provider "aws" {
  source          = "../../tests/terraform/mocks"
  override_during = plan
}

override_resource {
  target          = module.dlq.aws_sqs_queue.this
  override_during = plan
  values = {
    arn = "arn:aws:sqs:eu-central-1:111122223333:outreach-test-scrape-reconciler-dlq"
    url = "https://sqs.eu-central-1.amazonaws.com/111122223333/outreach-test-scrape-reconciler-dlq"
  }
}

override_resource {
  target          = aws_iam_role.schedule
  override_during = plan
  values = {
    arn = "arn:aws:iam::111122223333:role/outreach-test-scrape-reconciler-schedule"
  }
}

override_data {
  target = data.aws_caller_identity.current
  values = {
    account_id = "111122223333"
  }
}

override_resource {
  target          = module.function.aws_lambda_function.this
  override_during = plan
  values = {
    arn = "arn:aws:lambda:eu-central-1:111122223333:function:outreach-test-scrape-reconciler"
  }
}

variables {
  name         = "outreach-test-scrape-reconciler"
  description  = "Heals stranded scrape tasks."
  handler      = "outreach.reconcilers.scrape.lambda_handler"
  package_path = "../../tests/terraform/fixtures/packages/scrape_reconciler.zip"
  powertools = {
    service_name      = "scrape-reconciler"
    metrics_namespace = "OutreachPipeline/test"
  }
  environment = { TASKS_TABLE = "outreach-test-tasks" }
  policy_statements = [{
    sid       = "ReadOpenTasks"
    actions   = ["dynamodb:Query"]
    resources = ["arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-tasks/index/open-tasks"]
  }]
  alarm_actions = ["arn:aws:sns:eu-central-1:111122223333:outreach-test-alarms"]
}

run "the_reconciler_planned_with_the_files_variables" {
  command = plan

  # runs_every_5_minutes_within_a_240_second_timeout
  assert {
    condition     = aws_scheduler_schedule.reconcile.schedule_expression == "rate(5 minutes)" && aws_scheduler_schedule.reconcile.state == "ENABLED"
    error_message = "The reconciler runs every 5 minutes by default."
  }

  assert {
    condition     = output.settings.timeout == 240 && output.settings.handler == "outreach.reconcilers.scrape.lambda_handler"
    error_message = "A run is cut at 240 s, inside the 5-minute period."
  }

  # the_first_run_comes_at_once_after_apply
  assert {
    condition     = aws_scheduler_schedule.reconcile.start_date == null && aws_scheduler_schedule.reconcile.flexible_time_window[0].mode == "OFF"
    error_message = "A Scheduler rate() schedule without start_date and without a flexible window invokes at once (schedule-types.html)."
  }

  # a_failed_delivery_is_retried_then_dead_lettered
  assert {
    condition = (
      aws_scheduler_schedule.reconcile.target[0].arn == "arn:aws:lambda:eu-central-1:111122223333:function:outreach-test-scrape-reconciler" &&
      aws_scheduler_schedule.reconcile.target[0].retry_policy[0].maximum_retry_attempts == 2 &&
      aws_scheduler_schedule.reconcile.target[0].retry_policy[0].maximum_event_age_in_seconds == 600 &&
      aws_scheduler_schedule.reconcile.target[0].dead_letter_config[0].arn == "arn:aws:sqs:eu-central-1:111122223333:outreach-test-scrape-reconciler-dlq"
    )
    error_message = "The schedule retries a failed delivery twice within 10 minutes, then uses the DLQ."
  }

  # the_schedule_role_may_only_invoke_the_reconciler_and_reach_its_dlq
  assert {
    condition = (
      aws_scheduler_schedule.reconcile.target[0].role_arn == "arn:aws:iam::111122223333:role/outreach-test-scrape-reconciler-schedule" &&
      jsondecode(aws_iam_role.schedule.assume_role_policy).Statement[0].Principal == { Service = "scheduler.amazonaws.com" } &&
      jsondecode(aws_iam_role.schedule.assume_role_policy).Statement[0].Condition.StringEquals["aws:SourceAccount"] == "111122223333"
    )
    error_message = "Only EventBridge Scheduler of this account assumes the schedule's role."
  }

  assert {
    condition = [for s in jsondecode(aws_iam_role_policy.schedule.policy).Statement : [s.Effect, s.Action, s.Resource]] == [
      ["Allow", "lambda:InvokeFunction", "arn:aws:lambda:eu-central-1:111122223333:function:outreach-test-scrape-reconciler"],
      ["Allow", "sqs:SendMessage", "arn:aws:sqs:eu-central-1:111122223333:outreach-test-scrape-reconciler-dlq"],
    ]
    error_message = "The role invokes this function and sends dead letters to this DLQ, nothing else."
  }

  # a_failed_run_is_retried_by_lambda_then_sent_to_the_dlq
  assert {
    condition = (
      output.async_invocation.maximum_retry_attempts == 2 &&
      output.async_invocation.maximum_event_age_in_seconds == 600 &&
      output.async_invocation.on_failure_destination_arn == "arn:aws:sqs:eu-central-1:111122223333:outreach-test-scrape-reconciler-dlq"
    )
    error_message = "A run that raised is retried twice, then lands in the DLQ."
  }

  assert {
    condition     = module.dlq.name == "outreach-test-scrape-reconciler-dlq" && module.dlq.message_retention_seconds == 1209600
    error_message = "The DLQ (encrypted by modules/dead-letter-queue) keeps failed runs 14 days."
  }

  # the_dlq_alarms_on_its_first_message
  assert {
    # The alarm's metric, threshold and actions are modules/dead-letter-queue's (tested there).
    condition = (
      module.dlq.alarm_name == "outreach-test-scrape-reconciler-dlq-not-empty" &&
      output.alarm_arns[0] == module.dlq.alarm_arn
    )
    error_message = "One message in the DLQ alarms the topic."
  }
}

run "null_settings_take_the_module_defaults" {
  command = plan

  variables {
    schedule_expression = null
    timeout_seconds     = null
    retry               = null
  }

  assert {
    condition     = aws_scheduler_schedule.reconcile.schedule_expression == "rate(5 minutes)" && output.settings.timeout == 240
    error_message = "A caller passing null gets the defaults declared here."
  }
}

run "each_refused_input_fails_its_own_validation_1" {
  command = plan

  variables {
    # rejects_a_schedule_that_is_not_rate_or_cron
    schedule_expression = "every 5 minutes"
    # rejects_more_than_185_delivery_retries
    retry = { delivery_retry_attempts = 186 }
  }

  expect_failures = [
    var.schedule_expression,
    var.retry,
  ]
}

run "each_refused_input_fails_its_own_validation_2" {
  command = plan

  variables {
    # rejects_an_event_age_beyond_lambdas_limit
    retry = { maximum_event_age_in_seconds = 21601 }
  }

  expect_failures = [
    var.retry,
  ]
}
