# Each validation of modules/email-inbound refuses the input it is there for.

mock_provider "aws" {
  source          = "../../tests/terraform/mocks"
  override_during = plan
}

mock_provider "aws" {
  alias           = "receiving"
  source          = "../../tests/terraform/mocks"
  override_during = plan
}

variables {
  name_prefix          = "outreach-test"
  receiving_region     = "eu-central-1"
  reply_domain         = "reply.example.com"
  unmatched_forward_to = "sales@example.com"
  soft_bounce_limit    = 3
  bucket_name          = "outreach-test-inbound-111122223333-eu-central-1"
  tasks_table = {
    name                       = "outreach-test-tasks"
    arn                        = "arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-tasks"
    reply_handles_index_arn    = "arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-tasks/index/reply-handles"
    recipient_emails_index_arn = "arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-tasks/index/recipient-emails"
  }
  contact_ledger = {
    name         = "outreach-test-contacts"
    arn          = "arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-contacts"
    key_patterns = { address = "address#*", domain = "domain#*" }
  }
  reply_token_key_arn = "arn:aws:kms:eu-central-1:111122223333:key/11111111-2222-3333-4444-555555555555"
  email_schedules = {
    group_name         = "outreach-test-email"
    schedules_arn      = "arn:aws:scheduler:eu-central-1:111122223333:schedule/outreach-test-email/*"
    worker_arn         = "arn:aws:lambda:eu-central-1:111122223333:function:outreach-test-email-worker"
    scheduler_role_arn = "arn:aws:iam::111122223333:role/outreach-test-email-scheduler"
    dlq_arn            = "arn:aws:sqs:eu-central-1:111122223333:outreach-test-email-dlq"
  }
  handler                      = "outreach.inbound_processor.lambda_handler"
  package_path                 = "../../tests/terraform/fixtures/packages/inbound_processor.zip"
  powertools_metrics_namespace = "OutreachPipeline/test"
  alarm_actions                = ["arn:aws:sns:eu-central-1:111122223333:outreach-test-alarms"]
}

# ---- validations ------------------------------------------------------------------------------------------

run "each_refused_input_fails_its_own_validation_1" {
  command = plan

  variables {
    # a_region_without_email_receiving_is_refused
    receiving_region = "eu-south-1"
    # a_reply_domain_that_is_no_domain_is_refused
    reply_domain = "Reply Example"
    # a_forwarder_named_like_the_unsubscribe_mailbox_is_refused
    forward_from_local_part = "unsubscribe"
    # a_retention_shorter_than_the_dlqs_is_refused
    retention_days = 13
    # a_rule_set_name_with_spaces_is_refused
    rule_set_name = "prod inbound"
    # an_absence_default_of_zero_days_is_refused
    away_default_days = 0
    # a_message_limit_over_ses_receivings_40_mb_is_refused
    max_message_bytes = 41943041
    # a_mapping_concurrency_over_the_processors_reservation_is_refused
    mapping = { maximum_concurrency = 10 }
  }

  expect_failures = [
    var.receiving_region,
    var.reply_domain,
    var.forward_from_local_part,
    var.retention_days,
    var.rule_set_name,
    var.away_default_days,
    var.max_message_bytes,
    var.mapping,
  ]
}

run "each_refused_input_fails_its_own_validation_2" {
  command = plan

  variables {
    # an_unmatched_mailbox_on_the_reply_domain_is_refused
    unmatched_forward_to = "Sales@Reply.Example.com"
    # an_unsubscribe_local_part_with_a_plus_is_refused
    unsubscribe_local_part = "reply+stop"
    # a_retention_over_ten_years_is_refused
    retention_days = 3651
    # an_absence_default_over_ninety_days_is_refused
    away_default_days = 91
  }

  expect_failures = [
    var.unmatched_forward_to,
    var.unsubscribe_local_part,
    var.retention_days,
    var.away_default_days,
  ]
}

run "each_refused_input_fails_its_own_validation_3" {
  command = plan

  variables {
    # an_unmatched_mailbox_that_is_no_address_is_refused
    unmatched_forward_to = "sales team"
    # a_visibility_timeout_under_six_processor_timeouts_is_refused
    queue     = { visibility_timeout_seconds = 300 }
    processor = { timeout_seconds = 60 }
  }

  expect_failures = [
    var.unmatched_forward_to,
    var.queue,
  ]
}
