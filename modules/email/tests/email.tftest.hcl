mock_provider "aws" {
  source          = "../../tests/terraform/mocks"
  override_during = plan
}

override_resource {
  target          = module.dlq.aws_sqs_queue.this
  override_during = plan
  values = {
    arn  = "arn:aws:sqs:eu-central-1:111122223333:outreach-test-email-dlq"
    url  = "https://sqs.eu-central-1.amazonaws.com/111122223333/outreach-test-email-dlq"
    name = "outreach-test-email-dlq"
  }
}

override_resource {
  target          = module.worker.aws_lambda_function.this
  override_during = plan
  values = {
    arn = "arn:aws:lambda:eu-central-1:111122223333:function:outreach-test-email-worker"
  }
}

override_resource {
  target          = aws_iam_role.scheduler
  override_during = plan
  values = {
    arn = "arn:aws:iam::111122223333:role/outreach-test-email-scheduler"
  }
}

variables {
  name_prefix = "outreach-test"
  tasks_table = {
    name                       = "outreach-test-tasks"
    arn                        = "arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-tasks"
    open_tasks_index_arn       = "arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-tasks/index/open-tasks"
    claim_lease_margin_seconds = 60
    open_index_shards          = 8
  }
  contact_ledger = {
    name         = "outreach-test-contacts"
    arn          = "arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-contacts"
    key_patterns = { address = "address#*", domain = "domain#*", identity = "identity#*" }
  }
  handlers = {
    worker        = "outreach.email_worker.lambda_handler"
    reconciler    = "outreach.reconcilers.email.lambda_handler"
    sending_guard = "outreach.sending_guard.lambda_handler"
  }
  packages = {
    worker        = "../../tests/terraform/fixtures/packages/email_worker.zip"
    reconciler    = "../../tests/terraform/fixtures/packages/email_reconciler.zip"
    sending_guard = "../../tests/terraform/fixtures/packages/sending_guard.zip"
  }
  sender_identity              = "example.com"
  powertools_metrics_namespace = "OutreachPipeline/test"
  alarm_actions                = ["arn:aws:sns:eu-central-1:111122223333:outreach-test-alarms"]
}

run "the_email_stage_planned_with_the_files_variables" {
  command = plan

  # the_scheduler_role_invokes_only_the_worker_and_sends_only_to_the_email_dlq
  assert {
    condition = jsondecode(aws_iam_role_policy.scheduler.policy).Statement == [
      {
        Sid      = "InvokeEmailWorker"
        Effect   = "Allow"
        Action   = "lambda:InvokeFunction"
        Resource = "arn:aws:lambda:eu-central-1:111122223333:function:outreach-test-email-worker"
      },
      {
        Sid      = "DeadLetterToEmailDlq"
        Effect   = "Allow"
        Action   = "sqs:SendMessage"
        Resource = "arn:aws:sqs:eu-central-1:111122223333:outreach-test-email-dlq"
      },
    ]
    error_message = "The scheduler role may invoke the worker and write to the email DLQ, nothing else."
  }

  assert {
    condition     = jsondecode(aws_iam_role.scheduler.assume_role_policy).Statement[0].Principal.Service == "scheduler.amazonaws.com" && jsondecode(aws_iam_role.scheduler.assume_role_policy).Statement[0].Condition.StringEquals["aws:SourceAccount"] == "111122223333"
    error_message = "Only this account's schedules assume the scheduler role."
  }

  # the_worker_sends_only_with_the_configured_identity_and_configuration_set
  assert {
    condition = [
      for s in jsondecode(output.worker_policy_json).Statement : s.Resource if s.Sid == "SendWithTheCampaignIdentity"
      ][0] == [
      "arn:aws:ses:eu-central-1:111122223333:identity/example.com",
      "arn:aws:ses:eu-central-1:111122223333:configuration-set/outreach-test-email",
    ]
    error_message = "ses:SendEmail is allowed on the sender identity and the configuration set only."
  }

  assert {
    condition     = output.worker_settings.environment.EMAIL_CONFIGURATION_SET == "outreach-test-email" && output.worker_settings.environment.EMAIL_SEND_GRACE_SECONDS == "3600"
    error_message = "The worker sends with the module's configuration set and grace period."
  }

  assert {
    condition     = jsondecode(aws_iam_role_policy.suppression_lookup.policy).Statement[0].Action == "ses:GetSuppressedDestination"
    error_message = "The only statement on \"*\" is the suppression-list lookup."
  }

  # a_failed_invocation_is_retried_twice_then_lands_in_the_email_dlq
  assert {
    condition     = output.worker_async_invocation.maximum_retry_attempts == 2 && output.worker_async_invocation.on_failure_destination_arn == "arn:aws:sqs:eu-central-1:111122223333:outreach-test-email-dlq"
    error_message = "The worker's event invoke config retries twice and then sends to the email DLQ."
  }

  assert {
    condition     = output.worker_async_invocation.maximum_event_age_in_seconds == 3600
    error_message = "An invocation older than the grace period is not retried."
  }

  # the_email_dlq_keeps_14_days_encrypted_and_alarms_on_its_first_message
  assert {
    condition     = module.dlq.name == "outreach-test-email-dlq" && module.dlq.message_retention_seconds == 1209600
    error_message = "The email DLQ (encrypted by modules/dead-letter-queue) keeps messages 14 days."
  }

  assert {
    # The alarm's metric, threshold and actions are modules/dead-letter-queue's (tested there).
    condition = (
      module.dlq.alarm_name == "outreach-test-email-dlq-not-empty" &&
      output.alarm_arns[0] == module.dlq.alarm_arn
    )
    error_message = "The first message in the email DLQ alarms the alarm topic."
  }

  # every_event_type_reaches_the_default_bus_through_one_destination
  assert {
    condition     = toset(aws_sesv2_configuration_set_event_destination.events.event_destination[0].matching_event_types) == toset(["SEND", "REJECT", "BOUNCE", "COMPLAINT", "DELIVERY", "DELIVERY_DELAY", "RENDERING_FAILURE"])
    error_message = "The configuration set publishes sends, rejections, bounces, complaints, deliveries, delays and rendering failures."
  }

  assert {
    condition     = aws_sesv2_configuration_set_event_destination.events.event_destination[0].enabled && aws_sesv2_configuration_set_event_destination.events.event_destination[0].event_bridge_destination[0].event_bus_arn == "arn:aws:events:eu-central-1:111122223333:event-bus/default"
    error_message = "The SES events go to the account's default event bus."
  }

  assert {
    # The destination keeps the name it was created with: a new name would replace it.
    condition     = aws_sesv2_configuration_set_event_destination.events.event_destination_name == "bounces-and-complaints"
    error_message = "The event destination keeps its name, so applied environments update it in place."
  }

  assert {
    condition     = toset(aws_sesv2_configuration_set.this.suppression_options[0].suppressed_reasons) == toset(["BOUNCE", "COMPLAINT"])
    error_message = "Bounced and complaining addresses are suppressed."
  }

  # the_worker_reads_only_the_recipients_address_and_domain_records_of_the_ledger
  assert {
    condition     = output.worker_settings.environment.CONTACTS_TABLE == "outreach-test-contacts"
    error_message = "The worker knows the contact ledger (CONTACTS_TABLE)."
  }

  assert {
    condition = [
      for s in jsondecode(output.worker_policy_json).Statement : s if s.Sid == "ReadContactStops"
      ] == [{
        Sid      = "ReadContactStops"
        Effect   = "Allow"
        Action   = ["dynamodb:BatchGetItem"]
        Resource = ["arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-contacts"]
        Condition = {
          "ForAllValues:StringLike" = { "dynamodb:LeadingKeys" = ["address#*", "domain#*"] }
          Null                      = { "dynamodb:LeadingKeys" = ["false"] }
        }
    }]
    error_message = "The worker may only read address and domain records of the ledger, in one BatchGetItem, never write them."
  }

  assert {
    condition     = output.schedules_arn == "arn:aws:scheduler:eu-central-1:111122223333:schedule/outreach-test-email/*"
    error_message = "The email group's schedules are named by one ARN pattern (for the functions that delete them)."
  }

  # the_email_reconciler_runs_every_30_minutes_on_the_email_schedules
  assert {
    condition     = module.reconciler.settings.handler == "outreach.reconcilers.email.lambda_handler" && var.reconciler.schedule_expression == "rate(30 minutes)"
    error_message = "The email reconciler runs outreach.reconcilers.email every 30 minutes."
  }

  assert {
    condition     = output.reconciler_settings.environment.EMAIL_SCHEDULE_GROUP == "outreach-test-email" && output.reconciler_settings.environment.EMAIL_WORKER_ARN == "arn:aws:lambda:eu-central-1:111122223333:function:outreach-test-email-worker"
    error_message = "The reconciler recreates schedules in the email group, targeting the worker."
  }

  assert {
    condition     = output.reconciler_thresholds.running_after_seconds == 180
    error_message = "A Running email task is settled a minute after its lease (60 s timeout + 60 s margin) ended."
  }

  assert {
    condition = [
      for s in jsondecode(module.reconciler.policy_json).Statement : s.Resource if s.Sid == "ManageEmailSchedules"
    ][0] == ["arn:aws:scheduler:eu-central-1:111122223333:schedule/outreach-test-email/*"]
    error_message = "The reconciler manages the email group's schedules only."
  }

  # The Easy DKIM tokens are known only after apply, and the mocked provider gives the (unconfigured)
  # dkim_signing_attributes block no value to override: the records themselves are read back after
  # the roots' applies (tests/terraform/test_root_applies.py).
  # the_module_creates_the_sender_identity_with_its_configuration_set_by_default
  assert {
    condition     = length(aws_sesv2_email_identity.sender) == 1 && aws_sesv2_email_identity.sender[0].email_identity == "example.com" && aws_sesv2_email_identity.sender[0].configuration_set_name == "outreach-test-email"
    error_message = "By default the module creates the identity, with its configuration set as the default."
  }

  assert {
    condition     = output.dkim_records != null && local.sender_domain == "example.com"
    error_message = "The stage that owns the identity reports its DKIM records, named under its domain."
  }

  # the_worker_reserves_ceil_of_the_send_rate_it_is_sized_for
  assert {
    condition     = output.max_send_rate == 14 && output.worker_settings.reserved_concurrent_executions == 14
    error_message = "By default the stage is sized for 14 emails per second and the worker reserves 14."
  }

  # the_scheduler_role_trusts_only_the_email_groups_schedules_of_this_account
  assert {
    condition = jsondecode(aws_iam_role.scheduler.assume_role_policy).Statement[0].Condition == {
      StringEquals = { "aws:SourceAccount" = "111122223333" }
      ArnEquals    = { "aws:SourceArn" = "arn:aws:scheduler:eu-central-1:111122223333:schedule-group/outreach-test-email" }
    }
    error_message = "Scheduler assumes the role only for this account's schedules of the email group (aws:SourceAccount and aws:SourceArn, the group's ARN)."
  }

  # the_worker_reads_only_email_tasks_and_writes_only_them_and_counter_shards
  assert {
    condition = {
      for s in jsondecode(output.worker_policy_json).Statement : s.Sid => s.Condition
      if contains(["ReadEmailTasks", "ClaimAndCompleteEmailTasks"], s.Sid)
      } == {
      ReadEmailTasks = {
        "ForAllValues:StringLike" = { "dynamodb:LeadingKeys" = ["email#*"] }
        Null                      = { "dynamodb:LeadingKeys" = ["false"] }
      }
      ClaimAndCompleteEmailTasks = {
        "ForAllValues:StringLike" = { "dynamodb:LeadingKeys" = ["email#*", "job#*#?"] }
        Null                      = { "dynamodb:LeadingKeys" = ["false"] }
      }
    }
    error_message = "The worker reads email tasks only and writes email tasks and counter shards only, never a request without a key."
  }

  # a_domain_identity_lets_the_worker_send_from_its_addresses_and_its_subdomains_only
  assert {
    condition = [
      for s in jsondecode(output.worker_policy_json).Statement : s.Condition if s.Sid == "SendWithTheCampaignIdentity"
    ][0] == { StringLike = { "ses:FromAddress" = ["*@example.com", "*@*.example.com"] } }
    error_message = "SendEmail is allowed only from an address of the domain identity (ses:FromAddress)."
  }

  # the_email_reconciler_writes_email_tasks_and_passes_the_role_to_scheduler_only
  assert {
    condition = {
      for s in jsondecode(module.reconciler.policy_json).Statement : s.Sid => s.Condition
      if contains(["MoveStrandedEmailTasks", "PassSchedulerRole"], s.Sid)
      } == {
      MoveStrandedEmailTasks = {
        "ForAllValues:StringLike" = { "dynamodb:LeadingKeys" = ["email#*", "job#*#?"] }
        Null                      = { "dynamodb:LeadingKeys" = ["false"] }
      }
      PassSchedulerRole = { StringEquals = { "iam:PassedToService" = ["scheduler.amazonaws.com"] } }
    }
    error_message = "The reconciler writes email tasks and counter shards only, and passes the scheduler role to EventBridge Scheduler only."
  }

  # the_account_reputation_alarms_page_at_half_the_rates_ses_reviews_an_account_at
  assert {
    condition = (
      aws_cloudwatch_metric_alarm.reputation["bounce"].metric_name == "Reputation.BounceRate" &&
      aws_cloudwatch_metric_alarm.reputation["bounce"].threshold == 0.025 &&
      aws_cloudwatch_metric_alarm.reputation["complaint"].metric_name == "Reputation.ComplaintRate" &&
      aws_cloudwatch_metric_alarm.reputation["complaint"].threshold == 0.0005 &&
      alltrue([for alarm in aws_cloudwatch_metric_alarm.reputation : alarm.namespace == "AWS/SES" && alarm.treat_missing_data == "notBreaching" && alarm.alarm_actions == toset(["arn:aws:sns:eu-central-1:111122223333:outreach-test-alarms"])])
    )
    error_message = "The bounce and complaint rate alarms page the alarm topic at 2.5 % and 0.05 %."
  }

  # the_worker_gets_the_warmup_ramp_and_an_established_identity_has_none
  assert {
    condition     = output.worker_settings.environment.WARMUP_START_DATE == "none" && startswith(output.worker_settings.environment.WARMUP_DAILY_CAPS, "50,50,50,50,100,") && output.worker_settings.environment.SENDING_DOMAIN == "example.com"
    error_message = "Without a start date the identity is established (none); the default schedule starts at 50 a day; the counted identity is the sender identity's domain."
  }

  # the_stop_alarms_pause_above_the_page_levels_and_below_the_ses_review_levels
  assert {
    condition = (
      aws_cloudwatch_metric_alarm.reputation_stop["bounce"].metric_name == "Reputation.BounceRate" &&
      aws_cloudwatch_metric_alarm.reputation_stop["bounce"].threshold == 0.04 &&
      aws_cloudwatch_metric_alarm.reputation_stop["complaint"].metric_name == "Reputation.ComplaintRate" &&
      aws_cloudwatch_metric_alarm.reputation_stop["complaint"].threshold == 0.0008 &&
      alltrue([for alarm in aws_cloudwatch_metric_alarm.reputation_stop : alarm.namespace == "AWS/SES" && alarm.period == 900 && alarm.evaluation_periods == 1 && alarm.treat_missing_data == "notBreaching" && alarm.alarm_actions == toset(["arn:aws:sns:eu-central-1:111122223333:outreach-test-alarms"])])
    )
    error_message = "The stop alarms page the alarm topic at 4 % bounces and 0.08 % complaints, over one 15-minute period."
  }

  # only_the_stop_alarms_going_to_alarm_reach_the_sending_guard
  assert {
    condition = jsondecode(aws_cloudwatch_event_rule.reputation_stop.event_pattern) == {
      source        = ["aws.cloudwatch"]
      "detail-type" = ["CloudWatch Alarm State Change"]
      detail = {
        alarmName = ["outreach-test-email-bounce-rate-stop", "outreach-test-email-complaint-rate-stop"]
        state     = { value = ["ALARM"] }
      }
    }
    error_message = "The rule matches the stop alarms' changes to ALARM only, not the page alarms."
  }
  assert {
    condition     = module.sending_guard.settings.environment["REPUTATION_STOP_ALARMS"] == "outreach-test-email-bounce-rate-stop,outreach-test-email-complaint-rate-stop" && module.sending_guard.settings.environment["EMAIL_CONFIGURATION_SET"] == "outreach-test-email"
    error_message = "The guard pauses the module's configuration set for the stop alarms."
  }

  # the_guard_may_only_pause_the_configuration_set_and_fails_into_its_alarmed_dlq
  assert {
    condition = [
      for statement in jsondecode(module.sending_guard.policy_json).Statement : statement
      if anytrue([for action in statement.Action : startswith(action, "ses:")])
      ] == [{
        Sid      = "PauseTheConfigurationSet"
        Effect   = "Allow"
        Action   = ["ses:PutConfigurationSetSendingOptions"]
        Resource = ["arn:aws:ses:eu-central-1:111122223333:configuration-set/outreach-test-email"]
    }]
    error_message = "The guard's only SES permission is PutConfigurationSetSendingOptions on the configuration set."
  }
  assert {
    condition     = aws_cloudwatch_event_target.sending_guard.retry_policy[0].maximum_retry_attempts == 185 && aws_cloudwatch_event_target.sending_guard.dead_letter_config[0].arn == module.guard_dlq.arn
    error_message = "A delivery to the guard is retried, then kept in the guard DLQ."
  }
  assert {
    condition     = module.sending_guard.async_invocation.maximum_retry_attempts == 2 && module.sending_guard.async_invocation.on_failure_destination_arn == module.guard_dlq.arn
    error_message = "A failed pause is retried twice by Lambda, then lands in the guard DLQ."
  }

  # the_guard_rule_is_enabled_by_default_and_only_pages_when_turned_off
  assert {
    condition     = aws_cloudwatch_event_rule.reputation_stop.state == "ENABLED"
    error_message = "By default a stop alarm's ALARM reaches the sending guard."
  }
}

run "each_refused_input_fails_its_own_validation_1" {
  command = plan

  variables {
    # a_grace_period_beyond_lambdas_event_age_limit_is_refused
    send_grace_seconds = 21601
    # a_send_rate_of_zero_is_refused
    max_send_rate = 0
    # a_reputation_alarm_level_at_or_above_the_ses_review_level_is_refused
    reputation_alarm_levels = { complaint_rate = 0.001 }
    # a_warmup_start_that_is_no_date_is_refused
    warmup = { start_date = "2027-02-30" }
  }

  expect_failures = [
    var.send_grace_seconds,
    var.max_send_rate,
    var.reputation_alarm_levels,
    var.warmup,
  ]
}

run "each_refused_input_fails_its_own_validation_2" {
  command = plan

  variables {
    # a_send_rate_above_1000_is_refused
    max_send_rate = 1001
    # a_decreasing_warmup_schedule_is_refused
    warmup = { start_date = "2027-03-01", daily_caps = [10, 20, 15] }
    # a_stop_level_at_or_below_its_page_level_is_refused
    reputation_stop_levels = { bounce_rate = 0.025 }
    # a_paused_recheck_longer_than_the_grace_period_is_refused
    send_grace_seconds     = 600
    paused_recheck_seconds = 900
  }

  expect_failures = [
    var.max_send_rate,
    var.warmup,
    var.reputation_stop_levels,
    var.paused_recheck_seconds,
  ]
}

run "each_refused_input_fails_its_own_validation_3" {
  command = plan

  variables {
    # a_warmup_cap_below_one_is_refused
    warmup = { daily_caps = [0, 10] }
    # a_stop_level_at_or_above_the_ses_review_level_is_refused
    reputation_stop_levels = { complaint_rate = 0.001 }
  }

  expect_failures = [
    var.warmup,
    var.reputation_stop_levels,
  ]
}

run "an_address_identity_publishes_its_dkim_records_under_its_domain" {
  command = plan

  variables {
    sender_identity = "Outreach@Example.com"
  }

  assert {
    condition     = local.sender_domain == "example.com"
    error_message = "An address's DKIM records belong to its domain (lower case)."
  }
}

run "an_existing_identity_is_used_without_being_created" {
  command = plan

  variables {
    create_sender_identity = false
  }

  assert {
    condition     = length(aws_sesv2_email_identity.sender) == 0
    error_message = "With create_sender_identity = false the module creates no identity."
  }

  assert {
    condition = output.sender_identity == "example.com" && [
      for s in jsondecode(output.worker_policy_json).Statement : s.Resource if s.Sid == "SendWithTheCampaignIdentity"
      ][0] == [
      "arn:aws:ses:eu-central-1:111122223333:identity/example.com",
      "arn:aws:ses:eu-central-1:111122223333:configuration-set/outreach-test-email",
    ]
    error_message = "The worker still sends with the named identity, whose ARN is built from its name."
  }

  assert {
    condition     = output.dkim_records == null
    error_message = "A stage that does not own the identity has no DKIM records to publish."
  }
}

run "a_fractional_send_rate_reserves_the_next_whole_number" {
  command = plan

  variables {
    max_send_rate = 2.5
  }

  assert {
    condition     = output.max_send_rate == 2.5 && output.worker_settings.reserved_concurrent_executions == 3
    error_message = "The worker reserves ceil(max_send_rate)."
  }
}

run "a_reserved_concurrency_set_on_the_worker_wins_over_the_send_rate" {
  command = plan

  variables {
    max_send_rate = 50
    worker        = { reserved_concurrency = 5 }
  }

  assert {
    condition     = output.worker_settings.reserved_concurrent_executions == 5 && output.max_send_rate == 50
    error_message = "worker.reserved_concurrency, when set, is the reservation."
  }
}

run "an_address_identity_lets_the_worker_send_from_that_address_only" {
  command = plan

  variables {
    sender_identity = "Sales@Example.com"
  }

  assert {
    condition = [
      for s in jsondecode(output.worker_policy_json).Statement : s.Condition if s.Sid == "SendWithTheCampaignIdentity"
    ][0] == { StringEquals = { "ses:FromAddress" = ["sales@example.com"] } }
    error_message = "SendEmail is allowed only from the address identity's own address, compared exactly (lower case)."
  }
}

run "a_warming_identity_passes_its_start_date_and_schedule" {
  command = plan

  variables {
    warmup = { start_date = "2027-03-01", daily_caps = [10, 20, 20, 40] }
  }

  assert {
    condition     = output.worker_settings.environment.WARMUP_START_DATE == "2027-03-01" && output.worker_settings.environment.WARMUP_DAILY_CAPS == "10,20,20,40"
    error_message = "The worker reads the ramp's start date and its caps, one per day, in order."
  }
}

run "a_turned_off_guard_leaves_the_stop_alarms_paging" {
  command = plan

  variables {
    reputation_guard_enabled = false
  }

  assert {
    condition     = aws_cloudwatch_event_rule.reputation_stop.state == "DISABLED" && length(aws_cloudwatch_metric_alarm.reputation_stop["bounce"].alarm_actions) == 1
    error_message = "With the guard off the rule is DISABLED and the stop alarms still page."
  }
}
