mock_provider "aws" {
  source          = "../../tests/terraform/mocks"
  override_during = plan
}

# The Region SES receives replies in (modules/email-inbound); the same mocked Region, eu-central-1.
mock_provider "aws" {
  alias           = "receiving"
  source          = "../../tests/terraform/mocks"
  override_during = plan
}

override_resource {
  target          = module.scrape_pipeline.aws_sqs_queue.queue
  override_during = plan
  values = {
    arn = "arn:aws:sqs:eu-central-1:111122223333:outreach-test-scrape"
    url = "https://sqs.eu-central-1.amazonaws.com/111122223333/outreach-test-scrape"
  }
}

override_resource {
  target          = module.tasks_table.aws_dynamodb_table.this
  override_during = plan
  values = {
    arn        = "arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-tasks"
    stream_arn = "arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-tasks/stream/2026-01-01T00:00:00.000"
  }
}

override_resource {
  target          = module.contact_ledger.aws_dynamodb_table.this
  override_during = plan
  values = {
    arn = "arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-contacts"
  }
}

override_resource {
  target          = module.email_feedback.aws_sqs_queue.events
  override_during = plan
  values = {
    arn = "arn:aws:sqs:eu-central-1:111122223333:outreach-test-ses-events"
    url = "https://sqs.eu-central-1.amazonaws.com/111122223333/outreach-test-ses-events"
  }
}

override_resource {
  target          = module.email_feedback.aws_kms_key.unsubscribe
  override_during = plan
  values = {
    arn    = "arn:aws:kms:eu-central-1:111122223333:key/11111111-2222-3333-4444-555555555555"
    key_id = "11111111-2222-3333-4444-555555555555"
  }
}

variables {
  environment     = "test"
  package_dir     = "../../tests/terraform/fixtures/packages"
  alarm_topic_arn = "arn:aws:sns:eu-central-1:111122223333:outreach-test-alarms"
  email           = { sender_identity = "example.com" }
}

run "the_pipeline_planned_with_the_files_variables" {
  command = plan

  # names_every_resource_after_the_environment
  assert {
    condition = (
      output.tasks_table_name == "outreach-test-tasks" &&
      output.scraper_function_name == "outreach-test-scraper" &&
      output.dispatcher_function_name == "outreach-test-dispatcher" &&
      output.dashboard_name == "outreach-test"
    )
    error_message = "Resources are named outreach-<environment>-<part>."
  }

  assert {
    condition = (
      output.results_bucket == "outreach-test-results-111122223333-eu-central-1" &&
      output.dispatch_failure_bucket == "outreach-test-failures-111122223333-eu-central-1"
    )
    error_message = "Bucket names carry the account and region so they are globally unique."
  }

  # dispatcher_reads_the_table_stream_and_feeds_the_scrape_queue
  assert {
    condition     = module.stream_dispatch.dispatcher_settings.environment.SCRAPE_QUEUE_URL == "https://sqs.eu-central-1.amazonaws.com/111122223333/outreach-test-scrape"
    error_message = "The dispatcher sends to the scrape queue."
  }

  assert {
    condition = anytrue([
      for s in jsondecode(module.stream_dispatch.dispatcher_policy_json).Statement :
      s.Sid == "ReadTaskStream" && s.Resource == ["arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-tasks/stream/2026-01-01T00:00:00.000"]
    ])
    error_message = "The dispatcher reads the tasks table's stream."
  }

  # every_function_knows_the_tasks_table
  assert {
    condition = (
      module.scrape_pipeline.scraper_settings.environment.TASKS_TABLE == "outreach-test-tasks" &&
      module.stream_dispatch.dispatcher_settings.environment.TASKS_TABLE == "outreach-test-tasks"
    )
    error_message = "TASKS_TABLE must name the environment's table in every function."
  }

  assert {
    condition = (
      module.scrape_pipeline.scraper_settings.environment.POWERTOOLS_METRICS_NAMESPACE == "OutreachPipeline/test" &&
      module.stream_dispatch.dispatcher_settings.environment.POWERTOOLS_METRICS_NAMESPACE == "OutreachPipeline/test"
    )
    error_message = "Metrics of an environment share one namespace."
  }

  # defaults_are_the_production_settings
  assert {
    condition = (
      module.scrape_pipeline.scraper_settings.timeout == 420 &&
      module.scrape_pipeline.scraper_settings.memory_size == 1536 &&
      module.scrape_pipeline.scraper_settings.reserved_concurrent_executions == 140
    )
    error_message = "The scraper defaults to 420 s, 1536 MB and 140 reserved concurrency."
  }

  assert {
    condition     = output.dispatch_mode == "lambda" && output.dispatch_pipe_name == null
    error_message = "Lambda dispatch is the default."
  }

  # the_email_stage_is_wired_with_its_defaults
  assert {
    condition = (
      output.email_schedule_group == "outreach-test-email" &&
      output.email_configuration_set == "outreach-test-email" &&
      output.email_sender_identity == "example.com"
    )
    error_message = "The email stage is named after the environment and sends as the configured identity."
  }

  assert {
    condition     = module.email.worker_settings.timeout == 60 && module.email.reconciler_thresholds.running_after_seconds == 180
    error_message = "Email settings left out take modules/email's defaults."
  }

  assert {
    condition     = module.email.worker_settings.environment.TASKS_TABLE == "outreach-test-tasks"
    error_message = "The email worker works on the environment's tasks table."
  }

  # the_reputation_guard_takes_modules_email_defaults_and_names_its_stop_alarms_to_the_operator
  assert {
    condition = (
      module.email.reputation_stop_levels.bounce_rate == 0.04 &&
      module.email.reputation_stop_levels.complaint_rate == 0.0008 &&
      module.email.worker_settings.environment.EMAIL_PAUSED_RECHECK_SECONDS == "900" &&
      output.root_outputs.email_reputation_stop_alarms == "outreach-test-email-bounce-rate-stop,outreach-test-email-complaint-rate-stop"
    )
    error_message = "Settings left out take modules/email's stop levels and recheck interval; the stop alarms are a root output."
  }

  # the_scrape_reconciler_writes_only_scrape_tasks_and_counter_shards
  assert {
    condition = [
      for s in jsondecode(module.scrape_reconciler.policy_json).Statement : s.Condition if s.Sid == "MoveStrandedTasks"
      ][0] == {
      "ForAllValues:StringLike" = { "dynamodb:LeadingKeys" = ["scrape#*", "job#*#?"] }
      Null                      = { "dynamodb:LeadingKeys" = ["false"] }
    }
    error_message = "The scrape reconciler writes scrape tasks and counter shards only (dynamodb:LeadingKeys), never a request without a key."
  }

  # the_contact_ledger_is_the_environments_and_every_function_that_reads_or_raises_it_knows_it
  assert {
    condition     = output.contacts_table_name == "outreach-test-contacts" && output.root_outputs.contacts_table_name == "outreach-test-contacts"
    error_message = "The ledger is named outreach-<environment>-contacts and shown at the root's top level."
  }

  assert {
    condition = (
      module.email.worker_settings.environment.CONTACTS_TABLE == "outreach-test-contacts" &&
      output.ses_event_consumer_settings.environment.CONTACTS_TABLE == "outreach-test-contacts" &&
      output.unsubscribe_settings.environment.CONTACTS_TABLE == "outreach-test-contacts"
    )
    error_message = "The worker, the consumer and the unsubscribe endpoint use the environment's ledger."
  }

  assert {
    condition     = module.contact_ledger.key_patterns == { address = "address#*", domain = "domain#*", identity = "identity#*" }
    error_message = "The ledger's key patterns reach the roles' conditions."
  }

  # the_email_feedback_functions_are_named_handled_and_wired_as_functions_json_says
  assert {
    condition = (
      output.ses_event_consumer_function_name == "outreach-test-ses-event-consumer" &&
      output.unsubscribe_function_name == "outreach-test-unsubscribe" &&
      output.ses_event_consumer_settings.handler == "outreach.ses_event_consumer.lambda_handler" &&
      output.unsubscribe_settings.handler == "outreach.unsubscribe.endpoint.lambda_handler"
    )
    error_message = "The consumer and the endpoint are outreach-<environment>-<name> with their functions.json handlers."
  }

  assert {
    condition = (
      output.ses_event_consumer_settings.environment.TASKS_TABLE == "outreach-test-tasks" &&
      output.ses_event_consumer_settings.environment.EMAIL_SCHEDULE_GROUP == "outreach-test-email" &&
      output.ses_event_consumer_settings.environment.SOFT_BOUNCE_LIMIT == "3" &&
      output.soft_bounce_limit == 3
    )
    error_message = "The consumer works on the environment's tasks and email schedules, with modules/email-feedback's 3 soft bounces."
  }

  assert {
    condition = (
      output.unsubscribe_settings.environment.UNSUBSCRIBE_KEY_ID == "arn:aws:kms:eu-central-1:111122223333:key/11111111-2222-3333-4444-555555555555" &&
      output.unsubscribe_settings.environment.CONTACT_EVENTS_QUEUE_URL == "https://sqs.eu-central-1.amazonaws.com/111122223333/outreach-test-ses-events" &&
      output.root_outputs.unsubscribe_key_arn == "arn:aws:kms:eu-central-1:111122223333:key/11111111-2222-3333-4444-555555555555" &&
      output.root_outputs.ses_events_queue_url == "https://sqs.eu-central-1.amazonaws.com/111122223333/outreach-test-ses-events"
    )
    error_message = "The endpoint verifies with the environment's key and fans out to its ses-events queue; both are root outputs."
  }

  assert {
    condition     = jsondecode(module.email_feedback.event_pattern).detail.mail.tags["ses:configuration-set"] == [output.email_configuration_set]
    error_message = "The rule takes the events of the email stage's configuration set."
  }

  assert {
    condition = alltrue([
      for key in ["contacts_table_name", "unsubscribe_url", "unsubscribe_key_arn", "ses_events_queue_url", "ses_events_dlq_url", "ses_event_consumer_function_name", "unsubscribe_function_name"] :
      contains(keys(output.root_outputs), key)
    ])
    error_message = "root_outputs carries every key of the issue 25 contract."
  }

  # the_consumer_cancels_through_the_tasks_tables_recipient_index_and_the_email_groups_schedules
  assert {
    condition = {
      for s in jsondecode(module.email_feedback.consumer_policy_json).Statement : s.Sid => s.Resource
      if contains(["FindEmailsToAnAddress", "DeleteCancelledEmailSchedules", "RecordContactEvents"], s.Sid)
      } == {
      FindEmailsToAnAddress         = ["arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-tasks/index/recipient-emails"]
      DeleteCancelledEmailSchedules = ["arn:aws:scheduler:eu-central-1:111122223333:schedule/outreach-test-email/*"]
      RecordContactEvents           = ["arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-contacts"]
    }
    error_message = "The consumer queries the recipient-emails index, deletes the email group's schedules and writes the ledger of this environment."
  }

  # the_dashboard_shows_the_ses_events_dlq_and_both_new_functions
  assert {
    condition = (
      strcontains(module.dashboard.body, "outreach-test-ses-events-dlq") &&
      strcontains(module.dashboard.body, "outreach-test-ses-event-consumer") &&
      strcontains(module.dashboard.body, "outreach-test-unsubscribe")
    )
    error_message = "The dashboard charts the ses-events DLQ and the consumer's and endpoint's errors and throttles."
  }

  # both_reconcilers_query_every_shard_of_the_open_tasks_key
  assert {
    condition = (
      module.scrape_reconciler.settings.environment.OPEN_INDEX_SHARDS == "8" &&
      module.email.reconciler_settings.environment.OPEN_INDEX_SHARDS == "8" &&
      output.open_index_shards == 8
    )
    error_message = "Both reconcilers and the command line get tasks-table's shard count of the open-tasks key (8 by default)."
  }
}

run "pipe_mode_deploys_no_dispatcher" {
  command = plan

  variables {
    dispatch_mode = "pipe"
  }

  assert {
    condition     = output.dispatch_pipe_name == "outreach-test-dispatch" && output.dispatcher_function_name == null
    error_message = "Pipe mode deploys the pipe and no dispatcher."
  }
}

run "each_refused_input_fails_its_own_validation" {
  command = plan

  variables {
    # rejects_an_environment_name_that_would_overflow_bucket_names
    environment = "production-eu-1"
    # rejects_an_alarm_target_that_is_not_an_sns_topic
    alarm_topic_arn = "arn:aws:sqs:eu-central-1:111122223333:alarms"
  }

  expect_failures = [
    var.environment,
    var.alarm_topic_arn,
  ]
}

run "the_scrape_reconciler_gets_thresholds_derived_from_the_applied_settings" {
  command = plan

  variables {
    scrape_queue = { visibility_timeout_seconds = 6000 }
    stream       = { maximum_record_age_in_seconds = 1800 }
  }

  assert {
    condition = (
      output.reconciler_thresholds.pending_after_seconds == 1800 + 60 &&
      output.reconciler_thresholds.running_after_seconds == 6000 + 420 + 60
    )
    error_message = "Thresholds follow the stream's record age and the queue's visibility, not fixed numbers."
  }
}

run "a_stop_level_set_on_the_pipeline_reaches_modules_email" {
  command = plan

  variables {
    email = { sender_identity = "example.com", reputation_stop_levels = { bounce_rate = 0.03 }, paused_recheck_seconds = 600 }
  }

  assert {
    condition = (
      module.email.reputation_stop_levels.bounce_rate == 0.03 &&
      module.email.reputation_stop_levels.complaint_rate == 0.0008 &&
      module.email.worker_settings.environment.EMAIL_PAUSED_RECHECK_SECONDS == "600"
    )
    error_message = "A stop level or recheck interval set on the pipeline reaches modules/email; the ones left out keep its defaults."
  }
}

run "the_email_feedback_settings_left_out_take_the_modules_defaults_and_set_ones_reach_it" {
  command = plan

  variables {
    email_feedback = { soft_bounce_limit = 4, unsubscribe = { reserved_concurrency = 3 } }
  }

  assert {
    condition     = output.soft_bounce_limit == 4 && output.unsubscribe_settings.reserved_concurrent_executions == 3 && output.unsubscribe_settings.timeout == 10
    error_message = "A set value reaches modules/email-feedback; the ones left out keep its defaults."
  }
}

run "a_shard_count_set_on_the_pipeline_reaches_the_table_module_and_the_reconcilers" {
  command = plan

  variables {
    open_index_shards = 12
  }

  assert {
    condition     = module.scrape_reconciler.settings.environment.OPEN_INDEX_SHARDS == "12" && output.open_index_shards == 12
    error_message = "open_index_shards set on the pipeline reaches tasks-table and the reconcilers."
  }
}
