mock_provider "aws" {
  source          = "../../tests/terraform/mocks"
  override_during = plan
}

override_resource {
  target          = aws_sqs_queue.queue
  override_during = plan
  values = {
    arn = "arn:aws:sqs:eu-central-1:111122223333:outreach-test-scrape"
    url = "https://sqs.eu-central-1.amazonaws.com/111122223333/outreach-test-scrape"
  }
}

override_resource {
  target          = module.dlq.aws_sqs_queue.this
  override_during = plan
  values = {
    arn = "arn:aws:sqs:eu-central-1:111122223333:outreach-test-scrape-dlq"
    url = "https://sqs.eu-central-1.amazonaws.com/111122223333/outreach-test-scrape-dlq"
  }
}

override_resource {
  target          = module.results_bucket.aws_s3_bucket.this
  override_during = plan
  values = {
    id  = "outreach-test-results"
    arn = "arn:aws:s3:::outreach-test-results"
  }
}

override_resource {
  target          = module.scraper.aws_lambda_function.this
  override_during = plan
  values = {
    arn = "arn:aws:lambda:eu-central-1:111122223333:function:outreach-test-scraper"
  }
}

variables {
  name_prefix                  = "outreach-test"
  tasks_table                  = { name = "outreach-test-tasks", arn = "arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-tasks", claim_lease_margin_seconds = 60 }
  handler                      = "outreach.scraper.lambda_handler"
  package_path                 = "../../tests/terraform/fixtures/packages/scraper.zip"
  results_bucket_name          = "outreach-test-results"
  powertools_metrics_namespace = "OutreachPipeline/test"
  alarm_actions                = ["arn:aws:sns:eu-central-1:111122223333:outreach-test-alarms"]
}

run "the_scrape_pipeline_planned_with_the_files_variables" {
  command = plan

  # scrape_queue_waits_90_minutes_keeps_4_days_and_is_encrypted
  assert {
    condition     = aws_sqs_queue.queue.visibility_timeout_seconds == 5400
    error_message = "Visibility timeout must be 5400 s (more than 6 x the 420 s scraper timeout)."
  }

  assert {
    condition     = aws_sqs_queue.queue.message_retention_seconds == 345600
    error_message = "The scrape queue keeps messages 4 days."
  }

  assert {
    # The DLQ is encrypted by modules/dead-letter-queue (tested there).
    condition     = aws_sqs_queue.queue.sqs_managed_sse_enabled
    error_message = "The scrape queue is encrypted at rest."
  }

  # scrape_queue_redrives_to_its_dlq_after_3_receives
  assert {
    condition = jsondecode(aws_sqs_queue.queue.redrive_policy) == {
      deadLetterTargetArn = "arn:aws:sqs:eu-central-1:111122223333:outreach-test-scrape-dlq"
      maxReceiveCount     = 3
    }
    error_message = "The scrape queue must move a message to its DLQ after 3 receives."
  }

  # dlq_keeps_14_days_and_accepts_only_the_scrape_queue
  assert {
    condition     = module.dlq.message_retention_seconds == 1209600
    error_message = "The DLQ keeps messages 14 days."
  }

  assert {
    condition = jsondecode(module.dlq.redrive_allow_policy) == {
      redrivePermission = "byQueue"
      sourceQueueArns   = ["arn:aws:sqs:eu-central-1:111122223333:outreach-test-scrape"]
    }
    error_message = "The DLQ only accepts messages redriven from the scrape queue."
  }

  # dlq_alarm_fires_on_the_first_message
  assert {
    # The alarm's metric, threshold and actions are modules/dead-letter-queue's (tested there).
    condition = (
      module.dlq.name == "outreach-test-scrape-dlq" &&
      module.dlq.alarm_name == "outreach-test-scrape-dlq-not-empty" &&
      output.alarm_arns[0] == module.dlq.alarm_arn
    )
    error_message = "The DLQ alarm must fire on one visible message and notify the topic."
  }

  # scraper_runs_420_seconds_with_1536_mb_and_140_reserved
  assert {
    condition     = output.scraper_settings.timeout == 420 && output.scraper_settings.memory_size == 1536 && output.scraper_settings.reserved_concurrent_executions == 140
    error_message = "The scraper must run 420 s with 1536 MB and 140 reserved concurrency."
  }

  assert {
    condition     = output.scraper_settings.handler == "outreach.scraper.lambda_handler"
    error_message = "The scraper runs outreach.scraper.lambda_handler."
  }

  assert {
    condition     = output.scraper_function_name == "outreach-test-scraper"
    error_message = "The scraper is named after the prefix."
  }

  assert {
    condition = output.scraper_settings.environment == tomap({
      TASKS_TABLE                     = "outreach-test-tasks"
      SCRAPE_QUEUE_URL                = "https://sqs.eu-central-1.amazonaws.com/111122223333/outreach-test-scrape"
      SCRAPE_DLQ_URL                  = "https://sqs.eu-central-1.amazonaws.com/111122223333/outreach-test-scrape-dlq"
      RESULTS_BUCKET                  = "outreach-test-results"
      RETRY_SCHEDULE_SECONDS          = "30,3600"
      CLAIM_LEASE_MARGIN_SECONDS      = "60"
      SCRAPER_USER_AGENT              = "outreach-pipeline-scraper/0.1 (+company research; contact via site operator)"
      SCRAPER_CONNECT_TIMEOUT_SECONDS = "10"
      SCRAPER_READ_TIMEOUT_SECONDS    = "20"
      SCRAPER_MAX_BODY_BYTES          = "2097152"
      SCRAPER_MAX_REDIRECTS           = "5"
      SCRAPER_ATTEMPTS_PER_URL        = "3"
      SCRAPER_MAX_EXTRA_PAGES         = "3"
      SCRAPER_MAX_TEXT_CHARS          = "20000"
      SCRAPER_RESPECT_ROBOTS_TXT      = "1"
      SCRAPER_CONNECTIONS_PER_SITE    = "3"
      POWERTOOLS_SERVICE_NAME         = "scraper"
      POWERTOOLS_LOG_LEVEL            = "INFO"
      POWERTOOLS_METRICS_NAMESPACE    = "OutreachPipeline/test"
    })
    error_message = "The scraper's environment must name its table, queues, bucket, retry schedule, lease margin and Powertools settings."
  }

  assert {
    condition = {
      for s in jsondecode(output.scraper_policy_json).Statement : s.Sid => [s.Action, s.Resource] if !contains(["WriteOwnLogs", "WriteTraces"], s.Sid)
      } == {
      ReadScrapeTasks       = [["dynamodb:GetItem"], ["arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-tasks"]]
      ClaimAndCompleteTasks = [["dynamodb:UpdateItem"], ["arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-tasks"]]
      ConsumeScrapeQueue    = [["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ChangeMessageVisibility"], ["arn:aws:sqs:eu-central-1:111122223333:outreach-test-scrape"]]
      SendUnreadableToDlq   = [["sqs:SendMessage"], ["arn:aws:sqs:eu-central-1:111122223333:outreach-test-scrape-dlq"]]
      WriteResults          = [["s3:PutObject"], ["arn:aws:s3:::outreach-test-results/results/*"]]
    }
    error_message = "The scraper's policy must name exactly its table, its queues and its results prefix."
  }

  assert {
    condition = {
      for s in jsondecode(output.scraper_policy_json).Statement : s.Sid => s.Condition
      if contains(["ReadScrapeTasks", "ClaimAndCompleteTasks"], s.Sid)
      } == {
      ReadScrapeTasks = {
        "ForAllValues:StringLike" = { "dynamodb:LeadingKeys" = ["scrape#*"] }
        Null                      = { "dynamodb:LeadingKeys" = ["false"] }
      }
      ClaimAndCompleteTasks = {
        "ForAllValues:StringLike" = { "dynamodb:LeadingKeys" = ["scrape#*", "job#*#?"] }
        Null                      = { "dynamodb:LeadingKeys" = ["false"] }
      }
    }
    error_message = "The scraper reads scrape tasks only and writes scrape tasks and counter shards only (dynamodb:LeadingKeys), never a request without a key."
  }

  # mapping_delivers_one_message_per_invocation_with_partial_batch_responses
  assert {
    condition     = aws_lambda_event_source_mapping.scrape_queue.event_source_arn == "arn:aws:sqs:eu-central-1:111122223333:outreach-test-scrape"
    error_message = "The mapping reads the scrape queue."
  }

  assert {
    condition     = aws_lambda_event_source_mapping.scrape_queue.function_name == "arn:aws:lambda:eu-central-1:111122223333:function:outreach-test-scraper"
    error_message = "The mapping invokes the scraper."
  }

  assert {
    condition     = aws_lambda_event_source_mapping.scrape_queue.batch_size == 1 && aws_lambda_event_source_mapping.scrape_queue.maximum_batching_window_in_seconds == 0
    error_message = "One task per invocation: batch size 1 and no batching window."
  }

  assert {
    condition     = one(aws_lambda_event_source_mapping.scrape_queue.scaling_config).maximum_concurrency == 140
    error_message = "At most 140 scrapers run at once."
  }

  assert {
    condition     = aws_lambda_event_source_mapping.scrape_queue.function_response_types == toset(["ReportBatchItemFailures"])
    error_message = "ReportBatchItemFailures must be on, or the handler's batchItemFailures is ignored."
  }

  # redelivery_horizon_is_visibility_plus_timeout_plus_lease_margin
  assert {
    condition     = output.redelivery_horizon_seconds == 5400 + 420 + 60 && output.max_receive_count == 3
    error_message = "A task unchanged for visibility + timeout + lease margin has no message SQS can still deliver."
  }

  # scrape_results_expire_after_90_days_unless_the_caller_says_otherwise
  assert {
    condition     = output.results_expiration_days == 90
    error_message = "Scrape results (contact data) expire after 90 days by default, never kept without a bound."
  }
}

run "dlq_source_restriction_can_be_turned_off_for_the_emulator" {
  command = plan

  variables {
    restrict_dlq_sources = false
  }

  assert {
    condition     = module.dlq.redrive_allow_policy == null
    error_message = "With restrict_dlq_sources = false the DLQ has no redrive allow policy."
  }
}

run "each_refused_input_fails_its_own_validation_1" {
  command = plan

  variables {
    # rejects_visibility_below_six_times_the_scraper_timeout
    queue = { visibility_timeout_seconds = 2519 }
    # rejects_maximum_concurrency_below_2
    mapping = { maximum_concurrency = 1 }
    # rejects_a_results_retention_below_one_day
    results_expiration_days = 0
  }

  expect_failures = [
    var.queue,
    var.mapping,
    var.results_expiration_days,
  ]
}

run "each_refused_input_fails_its_own_validation_2" {
  command = plan

  variables {
    # rejects_dlq_retention_not_longer_than_the_queue
    queue = { message_retention_seconds = 1209600, dlq_message_retention_seconds = 1209600 }
    # rejects_a_batch_above_10_without_a_batching_window
    mapping = { batch_size = 11 }
    # rejects_a_fractional_results_retention
    results_expiration_days = 1.5
  }

  expect_failures = [
    var.queue,
    var.mapping,
    var.results_expiration_days,
  ]
}

run "each_refused_input_fails_its_own_validation_3" {
  command = plan

  variables {
    # rejects_maximum_concurrency_above_1000
    scraper = { reserved_concurrency = 2000 }
    mapping = { maximum_concurrency = 1001 }
  }

  expect_failures = [
    var.mapping,
  ]
}

run "each_refused_input_fails_its_own_validation_4" {
  command = plan

  variables {
    # rejects_maximum_concurrency_above_reserved_concurrency
    scraper = { reserved_concurrency = 100 }
    mapping = { maximum_concurrency = 140 }
  }

  expect_failures = [
    var.mapping,
  ]
}

run "each_refused_input_fails_its_own_validation_5" {
  command = plan

  variables {
    # rejects_zero_receives_before_the_dlq
    queue = { max_receive_count = 0 }
  }

  expect_failures = [
    var.queue,
  ]
}

run "each_refused_input_fails_its_own_validation_6" {
  command = plan

  variables {
    # rejects_a_retry_delay_beyond_the_sqs_visibility_limit
    scraper = { retry_schedule_seconds = [120, 43201] }
  }

  expect_failures = [
    var.scraper,
  ]
}

run "each_refused_input_fails_its_own_validation_7" {
  command = plan

  variables {
    # rejects_no_connection_per_site
    scraper = { fetch = { connections_per_site = 0 } }
  }

  expect_failures = [
    var.scraper,
  ]
}

run "each_refused_input_fails_its_own_validation_8" {
  command = plan

  variables {
    # rejects_more_connections_per_site_than_a_browser_opens
    scraper = { fetch = { connections_per_site = 7 } }
  }

  expect_failures = [
    var.scraper,
  ]
}

run "each_refused_input_fails_its_own_validation_9" {
  command = plan

  variables {
    # rejects_a_fractional_connections_per_site
    scraper = { fetch = { connections_per_site = 2.5 } }
  }

  expect_failures = [
    var.scraper,
  ]
}

run "each_refused_input_fails_its_own_validation_10" {
  command = plan

  variables {
    # rejects_a_first_retry_later_than_5_minutes
    scraper = { retry_schedule_seconds = [301, 3600] }
  }

  expect_failures = [
    var.scraper,
  ]
}

run "each_refused_input_fails_its_own_validation_11" {
  command = plan

  variables {
    # rejects_retries_that_give_up_within_the_hour
    scraper = { retry_schedule_seconds = [120, 240, 480] }
  }

  expect_failures = [
    var.queue,
  ]
}

run "accepts_visibility_of_exactly_six_times_the_timeout" {
  command = plan

  variables {
    queue = { visibility_timeout_seconds = 2520 }
  }

  assert {
    condition     = aws_sqs_queue.queue.visibility_timeout_seconds == 2520
    error_message = "6 x 420 s is the smallest visibility timeout allowed."
  }
}

run "fetches_one_page_after_another_with_one_connection_per_site" {
  command = plan

  variables {
    scraper = { fetch = { connections_per_site = 1 } }
  }

  assert {
    condition     = output.scraper_settings.environment["SCRAPER_CONNECTIONS_PER_SITE"] == "1"
    error_message = "connections_per_site = 1 must reach the scraper as SCRAPER_CONNECTIONS_PER_SITE."
  }
}

run "redelivery_horizon_follows_a_retry_delay_longer_than_the_visibility" {
  command = plan

  variables {
    scraper = { retry_schedule_seconds = [120, 7200] }
  }

  assert {
    condition     = output.redelivery_horizon_seconds == 7200 + 420 + 60
    error_message = "A released task's message can stay hidden for the longest retry delay."
  }
}

run "scrape_results_expire_after_the_configured_days" {
  command = plan

  variables {
    results_expiration_days = 7
  }

  assert {
    condition     = output.results_expiration_days == 7
    error_message = "The results bucket's lifecycle rule expires objects after results_expiration_days."
  }
}

run "a_null_results_retention_takes_the_module_default" {
  command = plan

  variables {
    results_expiration_days = null
  }

  assert {
    condition     = output.results_expiration_days == 90
    error_message = "null (a root that leaves the retention unset) means the module's 90 days, not keep forever."
  }
}
