# The inbound queue, its DLQ and mapping, and the processor (main.tf); the receiving side is
# email_inbound.tftest.hcl.

mock_provider "aws" {
  source          = "../../tests/terraform/mocks"
  override_during = plan
}

# The receiving Region's provider: the same mocked values (eu-central-1) unless a run overrides its
# aws_region.
mock_provider "aws" {
  alias           = "receiving"
  source          = "../../tests/terraform/mocks"
  override_during = plan
}

override_resource {
  target          = aws_sqs_queue.inbound
  override_during = plan
  values = {
    arn = "arn:aws:sqs:eu-central-1:111122223333:outreach-test-inbound"
    url = "https://sqs.eu-central-1.amazonaws.com/111122223333/outreach-test-inbound"
  }
}

override_resource {
  target          = module.dlq.aws_sqs_queue.this
  override_during = plan
  values = {
    arn  = "arn:aws:sqs:eu-central-1:111122223333:outreach-test-inbound-dlq"
    url  = "https://sqs.eu-central-1.amazonaws.com/111122223333/outreach-test-inbound-dlq"
    name = "outreach-test-inbound-dlq"
  }
}

override_resource {
  target          = aws_s3_bucket.inbound
  override_during = plan
  values = {
    arn = "arn:aws:s3:::outreach-test-inbound-111122223333-eu-central-1"
  }
}

override_resource {
  target          = aws_sns_topic.inbound
  override_during = plan
  values = {
    arn = "arn:aws:sns:eu-central-1:111122223333:outreach-test-inbound"
  }
}

override_resource {
  target          = module.processor.aws_lambda_function.this
  override_during = plan
  values = {
    arn = "arn:aws:lambda:eu-central-1:111122223333:function:outreach-test-inbound-processor"
  }
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

# ---- the queue, the DLQ, the mapping ---------------------------------------------------------------------

run "the_inbound_queue_and_processor_planned_with_the_files_variables" {
  command = plan

  # the_queue_redrives_to_an_alarmed_dlq_after_five_receives
  assert {
    condition = (
      aws_sqs_queue.inbound.name == "outreach-test-inbound" && aws_sqs_queue.inbound.sqs_managed_sse_enabled &&
      aws_sqs_queue.inbound.visibility_timeout_seconds == 360 &&
      jsondecode(aws_sqs_queue.inbound.redrive_policy) == {
        deadLetterTargetArn = "arn:aws:sqs:eu-central-1:111122223333:outreach-test-inbound-dlq"
        maxReceiveCount     = 5
      }
    )
    error_message = "The queue (SSE-SQS, visibility 6 x the processor's 60 s) redrives after 5 receives."
  }

  assert {
    condition = (
      module.dlq.alarm_name == "outreach-test-inbound-dlq-not-empty" && module.dlq.message_retention_seconds == 1209600 &&
      jsondecode(module.dlq.redrive_allow_policy).sourceQueueArns == ["arn:aws:sqs:eu-central-1:111122223333:outreach-test-inbound"] &&
      output.alarm_arns[0] == module.dlq.alarm_arn
    )
    error_message = "The DLQ keeps 14 days, takes the inbound queue's redrives only and alarms on its first message."
  }

  # the_mapping_reports_batch_item_failures_at_bounded_concurrency
  assert {
    condition = (
      aws_lambda_event_source_mapping.inbound.event_source_arn == "arn:aws:sqs:eu-central-1:111122223333:outreach-test-inbound" &&
      aws_lambda_event_source_mapping.inbound.function_name == "arn:aws:lambda:eu-central-1:111122223333:function:outreach-test-inbound-processor" &&
      aws_lambda_event_source_mapping.inbound.function_response_types == toset(["ReportBatchItemFailures"]) &&
      aws_lambda_event_source_mapping.inbound.batch_size == 5 &&
      one(aws_lambda_event_source_mapping.inbound.scaling_config).maximum_concurrency == 5
    )
    error_message = "The processor's mapping takes batches of 5, at most 5 at once, and only failed records are received again."
  }

  # ---- the processor ----------------------------------------------------------------------------------------
  # the_processor_gets_its_settings_and_the_resources_it_reads
  assert {
    condition = (
      output.processor_function_name == "outreach-test-inbound-processor" &&
      output.processor_settings.handler == "outreach.inbound_processor.lambda_handler" &&
      output.processor_settings.timeout == 60 && output.processor_settings.memory_size == 512 &&
      output.processor_settings.reserved_concurrent_executions == 5
    )
    error_message = "The processor: outreach.inbound_processor.lambda_handler, 60 s, 512 MB, 5 reserved."
  }

  assert {
    condition = {
      for k, v in output.processor_settings.environment : k => v if !startswith(k, "POWERTOOLS_")
      } == {
      TASKS_TABLE               = "outreach-test-tasks"
      CONTACTS_TABLE            = "outreach-test-contacts"
      INBOUND_BUCKET            = "outreach-test-inbound-111122223333-eu-central-1"
      INBOUND_BUCKET_REGION     = "eu-central-1"
      REPLY_DOMAIN              = "reply.example.com"
      UNSUBSCRIBE_LOCAL_PART    = "unsubscribe"
      FORWARD_FROM              = "forwarder@reply.example.com"
      UNMATCHED_FORWARD_TO      = "sales@example.com"
      UNSUBSCRIBE_KEY_ID        = "arn:aws:kms:eu-central-1:111122223333:key/11111111-2222-3333-4444-555555555555"
      EMAIL_SCHEDULE_GROUP      = "outreach-test-email"
      EMAIL_WORKER_ARN          = "arn:aws:lambda:eu-central-1:111122223333:function:outreach-test-email-worker"
      EMAIL_SCHEDULER_ROLE_ARN  = "arn:aws:iam::111122223333:role/outreach-test-email-scheduler"
      EMAIL_DLQ_ARN             = "arn:aws:sqs:eu-central-1:111122223333:outreach-test-email-dlq"
      SOFT_BOUNCE_LIMIT         = "3"
      AWAY_DEFAULT_DAYS         = "7"
      INBOUND_MAX_MESSAGE_BYTES = "10485760"
    }
    error_message = "The processor's environment is exactly the inbound interface's (config.for_inbound_processor)."
  }

  # the_processor_forwards_only_from_the_forwarder_with_the_reply_domains_identity
  assert {
    condition = anytrue([
      for s in jsondecode(output.processor_policy_json).Statement :
      s.Sid == "ForwardFromTheForwarder" && s.Action == ["ses:SendEmail"] &&
      s.Resource == ["arn:aws:ses:eu-central-1:111122223333:identity/reply.example.com"] &&
      try(s.Condition, null) == { StringEquals = { "ses:FromAddress" = ["forwarder@reply.example.com"] } }
    ])
    error_message = "SendEmail on the reply domain's identity, From forwarder@<reply domain> only; no configuration set."
  }

  assert {
    condition = !anytrue([
      for s in jsondecode(output.processor_policy_json).Statement :
      anytrue([for r in s.Resource : strcontains(r, ":configuration-set/")])
    ])
    error_message = "Forwards are no campaign sends: the role names no configuration set."
  }

  # the_processor_reads_inbound_objects_only_and_moves_email_schedules_in_the_email_group
  assert {
    condition = anytrue([
      for s in jsondecode(output.processor_policy_json).Statement :
      s.Sid == "ReadReceivedMessages" && s.Action == ["s3:GetObject"] &&
      s.Resource == ["arn:aws:s3:::outreach-test-inbound-111122223333-eu-central-1/inbound/*"]
    ])
    error_message = "The processor reads the messages under inbound/ and nothing else of the bucket."
  }

  assert {
    condition = anytrue([
      for s in jsondecode(output.processor_policy_json).Statement :
      s.Sid == "MoveEmailSchedules" && s.Resource == ["arn:aws:scheduler:eu-central-1:111122223333:schedule/outreach-test-email/*"]
      ]) && anytrue([
      for s in jsondecode(output.processor_policy_json).Statement :
      s.Sid == "PassSchedulerRole" && s.Resource == ["arn:aws:iam::111122223333:role/outreach-test-email-scheduler"] &&
      try(s.Condition, null) == { StringEquals = { "iam:PassedToService" = ["scheduler.amazonaws.com"] } }
    ])
    error_message = "Schedules of the email group only; the scheduler role passed to EventBridge Scheduler only."
  }

  assert {
    condition = anytrue([
      for s in jsondecode(output.processor_policy_json).Statement :
      s.Sid == "CheckReplyTokens" && s.Action == ["kms:GenerateMac"] && s.Resource == ["arn:aws:kms:eu-central-1:111122223333:key/11111111-2222-3333-4444-555555555555"]
    ])
    error_message = "Reply tokens are checked with GenerateMac on the HMAC key."
  }

  # the_processor_reaches_email_tasks_address_records_and_its_receipts_only
  assert {
    condition = {
      for s in jsondecode(output.processor_policy_json).Statement : s.Sid => [s.Action, try(s.Condition["ForAllValues:StringLike"]["dynamodb:LeadingKeys"], null)]
      if contains(["ReadEmailTasks", "MarkAndMoveEmailTasks", "RecordContactEngagement", "KeepInboundReceipts"], s.Sid)
      } == {
      ReadEmailTasks          = [["dynamodb:GetItem", "dynamodb:BatchGetItem"], ["email#*"]]
      MarkAndMoveEmailTasks   = [["dynamodb:UpdateItem"], ["email#*", "job#*#?"]]
      RecordContactEngagement = [["dynamodb:UpdateItem"], ["address#*"]]
      KeepInboundReceipts     = [["dynamodb:GetItem", "dynamodb:UpdateItem"], ["inbound#*"]]
    }
    error_message = "Each table statement names its key kinds (dynamodb:LeadingKeys): email tasks and counters, address records, inbound receipts."
  }

  assert {
    condition = alltrue([
      for s in jsondecode(output.processor_policy_json).Statement :
      try(s.Condition.Null["dynamodb:LeadingKeys"], null) == ["false"]
      if anytrue([for a in s.Action : startswith(a, "dynamodb:") && a != "dynamodb:Query"])
    ])
    error_message = "Every item statement refuses a request without a key (Null = false)."
  }

  # without_a_bucket_key_the_processor_has_no_kms_decrypt
  assert {
    condition     = !anytrue([for s in jsondecode(output.processor_policy_json).Statement : contains(s.Action, "kms:Decrypt")])
    error_message = "SSE-S3 needs no key permission; the role has none."
  }
}
