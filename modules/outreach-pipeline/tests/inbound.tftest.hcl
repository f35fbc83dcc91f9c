# The pipeline with and without replies (var.inbound, modules/email-inbound).

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

run "without_inbound_no_reply_resource_is_planned" {
  command = plan

  assert {
    condition = (
      length(module.email_inbound) == 0 && output.inbound_processor_function_name == null &&
      output.inbound_bucket == null && output.root_outputs.inbound_reply_domain == null
    )
    error_message = "inbound = null (the default) plans no receiving, queue or processor."
  }
}

run "with_inbound_the_processor_is_named_handled_and_wired_as_functions_json_says" {
  command = plan

  variables {
    inbound = {
      receiving_region     = "eu-central-1"
      reply_domain         = "reply.example.com"
      unmatched_forward_to = "sales@example.com"
    }
  }

  assert {
    condition = (
      output.inbound_processor_function_name == "outreach-test-inbound-processor" &&
      output.inbound_processor_settings.handler == "outreach.inbound_processor.lambda_handler" &&
      output.root_outputs.inbound_processor_function_name == "outreach-test-inbound-processor"
    )
    error_message = "The processor is outreach-<environment>-inbound-processor with its functions.json handler."
  }

  assert {
    condition = (
      output.inbound_processor_settings.environment.TASKS_TABLE == "outreach-test-tasks" &&
      output.inbound_processor_settings.environment.CONTACTS_TABLE == "outreach-test-contacts" &&
      output.inbound_processor_settings.environment.UNSUBSCRIBE_KEY_ID == "arn:aws:kms:eu-central-1:111122223333:key/11111111-2222-3333-4444-555555555555" &&
      output.inbound_processor_settings.environment.EMAIL_SCHEDULE_GROUP == "outreach-test-email" &&
      output.inbound_processor_settings.environment.SOFT_BOUNCE_LIMIT == "3" &&
      output.inbound_processor_settings.environment.AWAY_DEFAULT_DAYS == "7" &&
      output.inbound_processor_settings.environment.INBOUND_BUCKET == "outreach-test-inbound-111122223333-eu-central-1"
    )
    error_message = "The processor works on the environment's tables, the unsubscribe HMAC key, the email group, the feedback module's soft-bounce limit and its own bucket."
  }

  assert {
    condition = (
      output.inbound_bucket == "outreach-test-inbound-111122223333-eu-central-1" &&
      output.inbound_mx_record == "10 inbound-smtp.eu-central-1.amazonaws.com" &&
      output.inbound_rule_set_name == "outreach-test-inbound" &&
      output.root_outputs.inbound_unsubscribe_address == "unsubscribe@reply.example.com"
    )
    error_message = "The bucket carries the account and receiving Region; the MX record, rule set and unsubscribe mailbox are the environment's."
  }

  assert {
    condition = {
      for s in jsondecode(output.inbound_processor_policy_json).Statement : s.Sid => s.Resource
      if contains(["FindRepliedEmails", "ForwardFromTheForwarder", "MoveEmailSchedules", "CheckReplyTokens"], s.Sid)
      } == {
      FindRepliedEmails = [
        "arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-tasks/index/reply-handles",
        "arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-tasks/index/recipient-emails",
      ]
      ForwardFromTheForwarder = ["arn:aws:ses:eu-central-1:111122223333:identity/reply.example.com"]
      MoveEmailSchedules      = ["arn:aws:scheduler:eu-central-1:111122223333:schedule/outreach-test-email/*"]
      CheckReplyTokens        = ["arn:aws:kms:eu-central-1:111122223333:key/11111111-2222-3333-4444-555555555555"]
    }
    error_message = "The processor finds tasks through the tasks table's indexes, forwards with the reply domain's identity, moves the email group's schedules and checks tokens with the HMAC key."
  }

  assert {
    condition = (
      strcontains(module.dashboard.body, "outreach-test-inbound-dlq") &&
      strcontains(module.dashboard.body, "outreach-test-inbound-processor") &&
      length(output.alarm_arns) == length(module.email_inbound[0].alarm_arns) + length(concat(module.scrape_pipeline.alarm_arns, module.stream_dispatch.alarm_arns, module.email.alarm_arns, module.email_feedback.alarm_arns))
    )
    error_message = "The dashboard charts the inbound DLQ and processor, and their alarms are the environment's."
  }
}

run "inbound_settings_left_out_take_the_modules_defaults_and_set_ones_reach_it" {
  command = plan

  variables {
    inbound = {
      receiving_region     = "eu-central-1"
      reply_domain         = "reply.example.com"
      unmatched_forward_to = "sales@example.com"
      away_default_days    = 14
      processor            = { memory_mb = 1024 }
    }
  }

  assert {
    condition = (
      output.inbound_processor_settings.environment.AWAY_DEFAULT_DAYS == "14" &&
      output.inbound_processor_settings.memory_size == 1024 &&
      output.inbound_processor_settings.timeout == 60 &&
      output.inbound_processor_settings.environment.INBOUND_MAX_MESSAGE_BYTES == "10485760"
    )
    error_message = "A set value reaches modules/email-inbound; the ones left out keep its defaults."
  }
}
