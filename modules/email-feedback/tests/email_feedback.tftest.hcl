mock_provider "aws" {
  source          = "../../tests/terraform/mocks"
  override_during = plan
}

override_resource {
  target          = aws_sqs_queue.events
  override_during = plan
  values = {
    arn = "arn:aws:sqs:eu-central-1:111122223333:outreach-test-ses-events"
    url = "https://sqs.eu-central-1.amazonaws.com/111122223333/outreach-test-ses-events"
  }
}

override_resource {
  target          = module.dlq.aws_sqs_queue.this
  override_during = plan
  values = {
    arn  = "arn:aws:sqs:eu-central-1:111122223333:outreach-test-ses-events-dlq"
    url  = "https://sqs.eu-central-1.amazonaws.com/111122223333/outreach-test-ses-events-dlq"
    name = "outreach-test-ses-events-dlq"
  }
}

override_resource {
  target          = aws_cloudwatch_event_rule.ses_events
  override_during = plan
  values = {
    arn = "arn:aws:events:eu-central-1:111122223333:rule/outreach-test-ses-events"
  }
}

override_resource {
  target          = module.consumer.aws_lambda_function.this
  override_during = plan
  values = {
    arn = "arn:aws:lambda:eu-central-1:111122223333:function:outreach-test-ses-event-consumer"
  }
}

override_resource {
  target          = module.unsubscribe.aws_iam_role.this
  override_during = plan
  values = {
    arn = "arn:aws:iam::111122223333:role/outreach-test-unsubscribe-role"
  }
}

override_resource {
  target          = aws_kms_key.unsubscribe
  override_during = plan
  values = {
    arn    = "arn:aws:kms:eu-central-1:111122223333:key/11111111-2222-3333-4444-555555555555"
    key_id = "11111111-2222-3333-4444-555555555555"
  }
}

variables {
  name_prefix            = "outreach-test"
  configuration_set_name = "outreach-test-email"
  schedules = {
    group_name = "outreach-test-email"
    arn        = "arn:aws:scheduler:eu-central-1:111122223333:schedule/outreach-test-email/*"
  }
  tasks_table = {
    name                       = "outreach-test-tasks"
    arn                        = "arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-tasks"
    recipient_emails_index_arn = "arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-tasks/index/recipient-emails"
  }
  contact_ledger = {
    name         = "outreach-test-contacts"
    arn          = "arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-contacts"
    key_patterns = { address = "address#*", domain = "domain#*" }
  }
  handlers = {
    consumer    = "outreach.ses_event_consumer.lambda_handler"
    unsubscribe = "outreach.unsubscribe.endpoint.lambda_handler"
  }
  packages = {
    consumer    = "../../tests/terraform/fixtures/packages/ses_event_consumer.zip"
    unsubscribe = "../../tests/terraform/fixtures/packages/unsubscribe.zip"
  }
  powertools_metrics_namespace = "OutreachPipeline/test"
  alarm_actions                = ["arn:aws:sns:eu-central-1:111122223333:outreach-test-alarms"]
}

# ---- the rule, the queue, the DLQ ------------------------------------------------------------------

run "the_email_feedback_planned_with_the_files_variables" {
  command = plan

  # the_rule_takes_only_ses_events_of_this_configuration_set_from_the_default_bus
  assert {
    condition = jsondecode(aws_cloudwatch_event_rule.ses_events.event_pattern) == {
      source = ["aws.ses"]
      detail = { mail = { tags = { "ses:configuration-set" = ["outreach-test-email"] } } }
    }
    error_message = "The pattern matches source aws.ses and the configuration set's ses:configuration-set tag, nothing wider."
  }

  assert {
    condition     = aws_cloudwatch_event_rule.ses_events.name == "outreach-test-ses-events" && aws_cloudwatch_event_rule.ses_events.event_bus_name == "default" && aws_cloudwatch_event_rule.ses_events.schedule_expression == null
    error_message = "One event-pattern rule on the default bus, the only bus SES publishes to."
  }

  assert {
    condition     = aws_cloudwatch_event_target.ses_events.arn == "arn:aws:sqs:eu-central-1:111122223333:outreach-test-ses-events" && aws_cloudwatch_event_target.ses_events.rule == "outreach-test-ses-events"
    error_message = "The rule's one target is the ses-events queue."
  }

  # an_event_eventbridge_cannot_deliver_lands_in_the_alarmed_dlq_after_a_day_of_retries
  assert {
    condition     = aws_cloudwatch_event_target.ses_events.retry_policy[0].maximum_event_age_in_seconds == 86400 && aws_cloudwatch_event_target.ses_events.retry_policy[0].maximum_retry_attempts == 185
    error_message = "EventBridge retries a failed delivery for 24 hours, 185 times."
  }

  assert {
    condition     = aws_cloudwatch_event_target.ses_events.dead_letter_config[0].arn == "arn:aws:sqs:eu-central-1:111122223333:outreach-test-ses-events-dlq"
    error_message = "An event EventBridge could not deliver goes to the ses-events DLQ instead of being dropped."
  }

  assert {
    condition     = module.dlq.alarm_name == "outreach-test-ses-events-dlq-not-empty" && output.alarm_arns[0] == module.dlq.alarm_arn && module.dlq.message_retention_seconds == 1209600
    error_message = "The DLQ (modules/dead-letter-queue) keeps 14 days and alarms on its first message."
  }

  # the_queue_is_encrypted_and_redrives_to_the_dlq_after_five_receives
  assert {
    condition     = aws_sqs_queue.events.name == "outreach-test-ses-events" && aws_sqs_queue.events.sqs_managed_sse_enabled
    error_message = "The ses-events queue is encrypted with SQS managed keys."
  }

  assert {
    condition = jsondecode(aws_sqs_queue.events.redrive_policy) == {
      deadLetterTargetArn = "arn:aws:sqs:eu-central-1:111122223333:outreach-test-ses-events-dlq"
      maxReceiveCount     = 5
    }
    error_message = "A record failed five times moves to the DLQ."
  }

  assert {
    condition     = aws_sqs_queue.events.visibility_timeout_seconds == 360 && aws_sqs_queue.events.message_retention_seconds == 345600
    error_message = "Visibility is 6 x the consumer's 60 s timeout; the queue keeps 4 days."
  }

  assert {
    condition     = jsondecode(module.dlq.redrive_allow_policy) == { redrivePermission = "byQueue", sourceQueueArns = ["arn:aws:sqs:eu-central-1:111122223333:outreach-test-ses-events"] }
    error_message = "The DLQ accepts redriven messages from the ses-events queue only."
  }

  # only_this_rule_may_send_to_the_queue_and_its_dlq
  assert {
    condition = jsondecode(aws_sqs_queue_policy.events.policy).Statement == [{
      Sid       = "SesEventsRuleSendsEvents"
      Effect    = "Allow"
      Principal = { Service = "events.amazonaws.com" }
      Action    = "sqs:SendMessage"
      Resource  = "arn:aws:sqs:eu-central-1:111122223333:outreach-test-ses-events"
      Condition = { ArnEquals = { "aws:SourceArn" = "arn:aws:events:eu-central-1:111122223333:rule/outreach-test-ses-events" } }
    }]
    error_message = "EventBridge may send to the queue for this rule only (aws:SourceArn), and nothing else."
  }

  assert {
    condition = jsondecode(aws_sqs_queue_policy.dlq.policy).Statement == [{
      Sid       = "SesEventsRuleSendsUndeliveredEvents"
      Effect    = "Allow"
      Principal = { Service = "events.amazonaws.com" }
      Action    = "sqs:SendMessage"
      Resource  = "arn:aws:sqs:eu-central-1:111122223333:outreach-test-ses-events-dlq"
      Condition = { ArnEquals = { "aws:SourceArn" = "arn:aws:events:eu-central-1:111122223333:rule/outreach-test-ses-events" } }
    }]
    error_message = "EventBridge may send what it could not deliver to the DLQ, for this rule only."
  }

  # ---- the consumer -----------------------------------------------------------------------------------
  # the_consumer_reads_the_queue_with_partial_batch_failures_and_bounded_concurrency
  assert {
    condition     = aws_lambda_event_source_mapping.events.event_source_arn == "arn:aws:sqs:eu-central-1:111122223333:outreach-test-ses-events" && aws_lambda_event_source_mapping.events.function_name == "arn:aws:lambda:eu-central-1:111122223333:function:outreach-test-ses-event-consumer"
    error_message = "The mapping feeds the ses-events queue to the consumer."
  }

  assert {
    condition     = aws_lambda_event_source_mapping.events.function_response_types == toset(["ReportBatchItemFailures"])
    error_message = "ReportBatchItemFailures: a failed record is received again alone, the others are deleted."
  }

  assert {
    condition     = aws_lambda_event_source_mapping.events.batch_size == 10 && aws_lambda_event_source_mapping.events.scaling_config[0].maximum_concurrency == 5 && output.consumer_settings.reserved_concurrent_executions == 5
    error_message = "The consumer's mapping takes batches of 10, at most 5 at once, within the consumer's reservation of 5."
  }

  # the_consumer_gets_both_tables_the_schedule_group_and_the_soft_bounce_limit
  assert {
    condition = {
      for k, v in output.consumer_settings.environment : k => v if !startswith(k, "POWERTOOLS_")
      } == {
      TASKS_TABLE          = "outreach-test-tasks"
      CONTACTS_TABLE       = "outreach-test-contacts"
      EMAIL_SCHEDULE_GROUP = "outreach-test-email"
      SOFT_BOUNCE_LIMIT    = "3"
    }
    error_message = "The consumer's environment is the contract's, with 3 soft bounces by default."
  }

  assert {
    condition     = output.consumer_settings.handler == "outreach.ses_event_consumer.lambda_handler" && output.consumer_settings.timeout == 60 && output.consumer_function_name == "outreach-test-ses-event-consumer"
    error_message = "The consumer runs outreach.ses_event_consumer, 60 s."
  }

  # the_consumer_reaches_only_address_records_email_tasks_counter_shards_and_the_email_schedules
  assert {
    condition = {
      for s in jsondecode(output.consumer_policy_json).Statement : s.Sid => { Action = s.Action, Resource = s.Resource, Condition = try(s.Condition, null) }
      if !contains(["WriteOwnLogs", "WriteTraces"], s.Sid)
      } == {
      RecordContactEvents = {
        Action    = ["dynamodb:UpdateItem", "dynamodb:GetItem"]
        Resource  = ["arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-contacts"]
        Condition = { "ForAllValues:StringLike" = { "dynamodb:LeadingKeys" = ["address#*"] }, Null = { "dynamodb:LeadingKeys" = ["false"] } }
      }
      ReadContactStops = {
        Action    = ["dynamodb:BatchGetItem"]
        Resource  = ["arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-contacts"]
        Condition = { "ForAllValues:StringLike" = { "dynamodb:LeadingKeys" = ["address#*", "domain#*"] }, Null = { "dynamodb:LeadingKeys" = ["false"] } }
      }
      FindEmailsToAnAddress = {
        Action    = ["dynamodb:Query"]
        Resource  = ["arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-tasks/index/recipient-emails"]
        Condition = null
      }
      ReadEmailTasks = {
        Action    = ["dynamodb:GetItem", "dynamodb:BatchGetItem"]
        Resource  = ["arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-tasks"]
        Condition = { "ForAllValues:StringLike" = { "dynamodb:LeadingKeys" = ["email#*"] }, Null = { "dynamodb:LeadingKeys" = ["false"] } }
      }
      MarkAndCancelEmailTasks = {
        Action    = ["dynamodb:UpdateItem"]
        Resource  = ["arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-tasks"]
        Condition = { "ForAllValues:StringLike" = { "dynamodb:LeadingKeys" = ["email#*", "job#*#?"] }, Null = { "dynamodb:LeadingKeys" = ["false"] } }
      }
      ConsumeSesEvents = {
        Action    = ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"]
        Resource  = ["arn:aws:sqs:eu-central-1:111122223333:outreach-test-ses-events"]
        Condition = null
      }
      DeleteCancelledEmailSchedules = {
        Action    = ["scheduler:DeleteSchedule"]
        Resource  = ["arn:aws:scheduler:eu-central-1:111122223333:schedule/outreach-test-email/*"]
        Condition = null
      }
    }
    error_message = "The consumer's role names exactly its tables' key kinds, the index and the email group's schedules."
  }

  # ---- one-click unsubscribe -------------------------------------------------------------------------
  # the_unsubscribe_key_is_an_hmac_key_the_account_administers_and_the_endpoint_verifies_with
  assert {
    condition     = aws_kms_key.unsubscribe.customer_master_key_spec == "HMAC_256" && aws_kms_key.unsubscribe.key_usage == "GENERATE_VERIFY_MAC" && aws_kms_key.unsubscribe.deletion_window_in_days == 30
    error_message = "An HMAC_256 key for GenerateMac/VerifyMac, deleted no sooner than 30 days after it is scheduled."
  }

  assert {
    condition = jsondecode(aws_kms_key.unsubscribe.policy).Statement == [
      {
        Sid       = "AccountAdministersTheKey"
        Effect    = "Allow"
        Principal = { AWS = "arn:aws:iam::111122223333:root" }
        Action    = "kms:*"
        Resource  = "*"
      },
      {
        Sid       = "UnsubscribeEndpointVerifiesTokens"
        Effect    = "Allow"
        Principal = { AWS = "arn:aws:iam::111122223333:role/outreach-test-unsubscribe-role" }
        Action    = "kms:VerifyMac"
        Resource  = "*"
      },
    ]
    error_message = "The account administers the key (and grants GenerateMac with IAM); the endpoint's role may only verify."
  }

  assert {
    condition     = aws_kms_alias.unsubscribe.name == "alias/outreach-test-unsubscribe" && output.unsubscribe_key_arn == "arn:aws:kms:eu-central-1:111122223333:key/11111111-2222-3333-4444-555555555555"
    error_message = "The key has an alias and its ARN is an output (the operator's CLI makes the tokens with it)."
  }

  # the_unsubscribe_endpoint_is_a_public_function_url_admitted_by_its_resource_policy
  assert {
    condition     = aws_lambda_function_url.unsubscribe.authorization_type == "NONE" && aws_lambda_function_url.unsubscribe.invoke_mode == "BUFFERED" && aws_lambda_function_url.unsubscribe.function_name == "outreach-test-unsubscribe"
    error_message = "The endpoint is a function URL without authentication (RFC 8058), buffered."
  }

  assert {
    condition     = length(aws_lambda_function_url.unsubscribe.cors) == 0
    error_message = "No CORS: the form posts to the URL that served it."
  }

  assert {
    condition = (
      aws_lambda_permission.unsubscribe_url.action == "lambda:InvokeFunctionUrl" &&
      aws_lambda_permission.unsubscribe_url.principal == "*" &&
      aws_lambda_permission.unsubscribe_url.function_url_auth_type == "NONE" &&
      aws_lambda_permission.unsubscribe_url.function_name == "outreach-test-unsubscribe"
    )
    error_message = "The public may invoke the function through its URL of auth type NONE."
  }

  assert {
    condition     = aws_lambda_permission.unsubscribe_invoke.action == "lambda:InvokeFunction" && aws_lambda_permission.unsubscribe_invoke.principal == "*" && aws_lambda_permission.unsubscribe_invoke.function_name == "outreach-test-unsubscribe"
    error_message = "A function URL made since October 2025 needs lambda:InvokeFunction beside lambda:InvokeFunctionUrl."
  }

  # the_unsubscribe_endpoint_verifies_with_the_key_writes_address_records_and_fans_out_to_the_queue
  assert {
    condition = {
      for k, v in output.unsubscribe_settings.environment : k => v if !startswith(k, "POWERTOOLS_")
      } == {
      CONTACTS_TABLE           = "outreach-test-contacts"
      UNSUBSCRIBE_KEY_ID       = "arn:aws:kms:eu-central-1:111122223333:key/11111111-2222-3333-4444-555555555555"
      CONTACT_EVENTS_QUEUE_URL = "https://sqs.eu-central-1.amazonaws.com/111122223333/outreach-test-ses-events"
    }
    error_message = "The endpoint's environment is the contract's."
  }

  assert {
    condition = {
      for s in jsondecode(output.unsubscribe_policy_json).Statement : s.Sid => { Action = s.Action, Resource = s.Resource, Condition = try(s.Condition, null) }
      if !contains(["WriteOwnLogs", "WriteTraces"], s.Sid)
      } == {
      VerifyUnsubscribeTokens = {
        Action    = ["kms:VerifyMac"]
        Resource  = ["arn:aws:kms:eu-central-1:111122223333:key/11111111-2222-3333-4444-555555555555"]
        Condition = null
      }
      RecordUnsubscribes = {
        Action    = ["dynamodb:UpdateItem"]
        Resource  = ["arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-contacts"]
        Condition = { "ForAllValues:StringLike" = { "dynamodb:LeadingKeys" = ["address#*"] }, Null = { "dynamodb:LeadingKeys" = ["false"] } }
      }
      FanOutUnsubscribes = {
        Action    = ["sqs:SendMessage"]
        Resource  = ["arn:aws:sqs:eu-central-1:111122223333:outreach-test-ses-events"]
        Condition = null
      }
    }
    error_message = "The endpoint may verify with the key, write address records and send to the ses-events queue, nothing else."
  }

  assert {
    condition     = output.unsubscribe_settings.reserved_concurrent_executions == 10 && output.unsubscribe_settings.timeout == 10 && output.unsubscribe_settings.handler == "outreach.unsubscribe.endpoint.lambda_handler"
    error_message = "The public endpoint runs outreach.unsubscribe.endpoint with 10 s and a reservation of 10 that caps a flood."
  }
}

# ---- validations -------------------------------------------------------------------------------------

run "the_soft_bounce_limit_can_be_set" {
  command = plan

  variables {
    soft_bounce_limit = 5
  }

  assert {
    condition     = output.consumer_settings.environment.SOFT_BOUNCE_LIMIT == "5" && output.soft_bounce_limit == 5
    error_message = "The consumer gets the configured soft-bounce limit."
  }
}

run "each_refused_input_fails_its_own_validation_1" {
  command = plan

  variables {
    # a_soft_bounce_limit_of_zero_is_refused
    soft_bounce_limit = 0
    # a_visibility_timeout_under_six_consumer_timeouts_is_refused
    queue    = { visibility_timeout_seconds = 300 }
    consumer = { timeout_seconds = 60 }
    # an_unsubscribe_reservation_of_zero_is_refused
    unsubscribe = { reserved_concurrency = 0 }
    # a_key_deletion_window_outside_7_to_30_days_is_refused
    unsubscribe_key_deletion_window_days = 6
    # a_configuration_set_name_with_a_space_is_refused
    configuration_set_name = "outreach test"
  }

  expect_failures = [
    var.soft_bounce_limit,
    var.queue,
    var.unsubscribe,
    var.unsubscribe_key_deletion_window_days,
    var.configuration_set_name,
  ]
}

run "each_refused_input_fails_its_own_validation_2" {
  command = plan

  variables {
    # a_fractional_soft_bounce_limit_is_refused
    soft_bounce_limit = 2.5
    # a_dlq_that_keeps_messages_no_longer_than_the_queue_is_refused
    queue = { message_retention_seconds = 1209600, dlq_message_retention_seconds = 1209600 }
    # a_mapping_concurrency_above_the_consumers_reservation_is_refused
    mapping = { maximum_concurrency = 6 }
  }

  expect_failures = [
    var.soft_bounce_limit,
    var.queue,
    var.mapping,
  ]
}

run "each_refused_input_fails_its_own_validation_3" {
  command = plan

  variables {
    # a_batch_of_more_than_ten_without_a_window_is_refused
    mapping = { batch_size = 11 }
  }

  expect_failures = [
    var.mapping,
  ]
}
