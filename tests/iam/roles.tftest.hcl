# The prod root planned against the mocked provider, for tests/iam: every resource a function's role
# names gets the ARN (and URL) AWS would give it, so the policies can be checked resource by resource.
# tests/iam/planned_roles.py copies this file next to a temporary copy of the root and reads the plan
# that `terraform test -json -verbose` prints.

mock_provider "aws" {
  source          = "../../../tests/terraform/mocks"
  override_during = plan
}

# The receiving Region's provider (modules/email-inbound): prod's own Region, eu-central-1.
mock_provider "aws" {
  alias           = "receiving"
  source          = "../../../tests/terraform/mocks"
  override_during = plan
}

# Replies on, so the inbound processor is planned with the other functions.
variables {
  package_dir                  = "../../../tests/terraform/fixtures/packages"
  alarm_emails                 = ["oncall@example.com"]
  email_sender_identity        = "example.com"
  inbound_reply_domain         = "reply.example.com"
  inbound_unmatched_forward_to = "sales@example.com"
}

override_resource {
  target          = module.pipeline.module.tasks_table.aws_dynamodb_table.this
  override_during = plan
  values = {
    arn        = "arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-prod-tasks"
    stream_arn = "arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-prod-tasks/stream/2026-01-01T00:00:00.000"
  }
}

override_resource {
  target          = module.pipeline.module.scrape_pipeline.aws_sqs_queue.queue
  override_during = plan
  values = {
    arn = "arn:aws:sqs:eu-central-1:111122223333:outreach-prod-scrape"
    url = "https://sqs.eu-central-1.amazonaws.com/111122223333/outreach-prod-scrape"
  }
}

override_resource {
  target          = module.pipeline.module.scrape_pipeline.module.dlq.aws_sqs_queue.this
  override_during = plan
  values = {
    arn = "arn:aws:sqs:eu-central-1:111122223333:outreach-prod-scrape-dlq"
    url = "https://sqs.eu-central-1.amazonaws.com/111122223333/outreach-prod-scrape-dlq"
  }
}

override_resource {
  target          = module.pipeline.module.scrape_reconciler.module.dlq.aws_sqs_queue.this
  override_during = plan
  values = {
    arn = "arn:aws:sqs:eu-central-1:111122223333:outreach-prod-scrape-reconciler-dlq"
    url = "https://sqs.eu-central-1.amazonaws.com/111122223333/outreach-prod-scrape-reconciler-dlq"
  }
}

override_resource {
  target          = module.pipeline.module.scrape_pipeline.module.results_bucket.aws_s3_bucket.this
  override_during = plan
  values = {
    arn = "arn:aws:s3:::outreach-prod-results-111122223333-eu-central-1"
  }
}

override_resource {
  target          = module.pipeline.module.stream_dispatch.module.failure_bucket[0].aws_s3_bucket.this
  override_during = plan
  values = {
    arn = "arn:aws:s3:::outreach-prod-failures-111122223333-eu-central-1"
  }
}

override_resource {
  target          = module.pipeline.module.scrape_pipeline.module.scraper.aws_lambda_function.this
  override_during = plan
  values = {
    arn = "arn:aws:lambda:eu-central-1:111122223333:function:outreach-prod-scraper"
  }
}

override_resource {
  target          = module.pipeline.module.scrape_pipeline.module.scraper.aws_cloudwatch_log_group.this
  override_during = plan
  values = {
    arn = "arn:aws:logs:eu-central-1:111122223333:log-group:/aws/lambda/outreach-prod-scraper"
  }
}

override_resource {
  target          = module.pipeline.module.stream_dispatch.module.dispatcher[0].aws_lambda_function.this
  override_during = plan
  values = {
    arn = "arn:aws:lambda:eu-central-1:111122223333:function:outreach-prod-dispatcher"
  }
}

override_resource {
  target          = module.pipeline.module.stream_dispatch.module.dispatcher[0].aws_cloudwatch_log_group.this
  override_during = plan
  values = {
    arn = "arn:aws:logs:eu-central-1:111122223333:log-group:/aws/lambda/outreach-prod-dispatcher"
  }
}

override_resource {
  target          = module.pipeline.module.scrape_reconciler.module.function.aws_lambda_function.this
  override_during = plan
  values = {
    arn = "arn:aws:lambda:eu-central-1:111122223333:function:outreach-prod-scrape-reconciler"
  }
}

override_resource {
  target          = module.pipeline.module.scrape_reconciler.module.function.aws_cloudwatch_log_group.this
  override_during = plan
  values = {
    arn = "arn:aws:logs:eu-central-1:111122223333:log-group:/aws/lambda/outreach-prod-scrape-reconciler"
  }
}

override_resource {
  target          = module.pipeline.module.email.module.dlq.aws_sqs_queue.this
  override_during = plan
  values = {
    arn = "arn:aws:sqs:eu-central-1:111122223333:outreach-prod-email-dlq"
    url = "https://sqs.eu-central-1.amazonaws.com/111122223333/outreach-prod-email-dlq"
  }
}

override_resource {
  target          = module.pipeline.module.email.module.reconciler.module.dlq.aws_sqs_queue.this
  override_during = plan
  values = {
    arn = "arn:aws:sqs:eu-central-1:111122223333:outreach-prod-email-reconciler-dlq"
    url = "https://sqs.eu-central-1.amazonaws.com/111122223333/outreach-prod-email-reconciler-dlq"
  }
}

override_resource {
  target          = module.pipeline.module.email.module.worker.aws_lambda_function.this
  override_during = plan
  values = {
    arn = "arn:aws:lambda:eu-central-1:111122223333:function:outreach-prod-email-worker"
  }
}

override_resource {
  target          = module.pipeline.module.email.module.worker.aws_cloudwatch_log_group.this
  override_during = plan
  values = {
    arn = "arn:aws:logs:eu-central-1:111122223333:log-group:/aws/lambda/outreach-prod-email-worker"
  }
}

override_resource {
  target          = module.pipeline.module.email.module.reconciler.module.function.aws_lambda_function.this
  override_during = plan
  values = {
    arn = "arn:aws:lambda:eu-central-1:111122223333:function:outreach-prod-email-reconciler"
  }
}

override_resource {
  target          = module.pipeline.module.email.module.reconciler.module.function.aws_cloudwatch_log_group.this
  override_during = plan
  values = {
    arn = "arn:aws:logs:eu-central-1:111122223333:log-group:/aws/lambda/outreach-prod-email-reconciler"
  }
}

override_resource {
  target          = module.pipeline.module.email.module.sending_guard.aws_lambda_function.this
  override_during = plan
  values = {
    arn = "arn:aws:lambda:eu-central-1:111122223333:function:outreach-prod-sending-guard"
  }
}

override_resource {
  target          = module.pipeline.module.email.module.sending_guard.aws_cloudwatch_log_group.this
  override_during = plan
  values = {
    arn = "arn:aws:logs:eu-central-1:111122223333:log-group:/aws/lambda/outreach-prod-sending-guard"
  }
}

override_resource {
  target          = module.pipeline.module.email.module.guard_dlq.aws_sqs_queue.this
  override_during = plan
  values = {
    arn = "arn:aws:sqs:eu-central-1:111122223333:outreach-prod-sending-guard-dlq"
    url = "https://sqs.eu-central-1.amazonaws.com/111122223333/outreach-prod-sending-guard-dlq"
  }
}

# The role the email schedules are given; the email reconciler passes it to each schedule it creates.
override_resource {
  target          = module.pipeline.module.email.aws_iam_role.scheduler
  override_during = plan
  values = {
    arn = "arn:aws:iam::111122223333:role/outreach-prod-email-scheduler"
  }
}

override_resource {
  target          = module.pipeline.module.email.aws_scheduler_schedule_group.this
  override_during = plan
  values = {
    arn = "arn:aws:scheduler:eu-central-1:111122223333:schedule-group/outreach-prod-email"
  }
}

override_resource {
  target          = module.pipeline.module.email.aws_sesv2_configuration_set.this
  override_during = plan
  values = {
    arn = "arn:aws:ses:eu-central-1:111122223333:configuration-set/outreach-prod-email"
  }
}

override_resource {
  target          = module.pipeline.module.email.aws_sesv2_email_identity.sender
  override_during = plan
  values = {
    arn = "arn:aws:ses:eu-central-1:111122223333:identity/example.com"
  }
}

override_resource {
  target          = module.pipeline.module.contact_ledger.aws_dynamodb_table.this
  override_during = plan
  values = {
    arn = "arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-prod-contacts"
  }
}

override_resource {
  target          = module.pipeline.module.email_feedback.aws_sqs_queue.events
  override_during = plan
  values = {
    arn = "arn:aws:sqs:eu-central-1:111122223333:outreach-prod-ses-events"
    url = "https://sqs.eu-central-1.amazonaws.com/111122223333/outreach-prod-ses-events"
  }
}

override_resource {
  target          = module.pipeline.module.email_feedback.module.dlq.aws_sqs_queue.this
  override_during = plan
  values = {
    arn = "arn:aws:sqs:eu-central-1:111122223333:outreach-prod-ses-events-dlq"
    url = "https://sqs.eu-central-1.amazonaws.com/111122223333/outreach-prod-ses-events-dlq"
  }
}

override_resource {
  target          = module.pipeline.module.email_feedback.aws_cloudwatch_event_rule.ses_events
  override_during = plan
  values = {
    arn = "arn:aws:events:eu-central-1:111122223333:rule/outreach-prod-ses-events"
  }
}

# The unsubscribe tokens' HMAC key: the endpoint's role verifies with it, named by its ARN.
override_resource {
  target          = module.pipeline.module.email_feedback.aws_kms_key.unsubscribe
  override_during = plan
  values = {
    arn    = "arn:aws:kms:eu-central-1:111122223333:key/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"
    key_id = "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"
  }
}

override_resource {
  target          = module.pipeline.module.email_feedback.module.consumer.aws_lambda_function.this
  override_during = plan
  values = {
    arn = "arn:aws:lambda:eu-central-1:111122223333:function:outreach-prod-ses-event-consumer"
  }
}

override_resource {
  target          = module.pipeline.module.email_feedback.module.consumer.aws_cloudwatch_log_group.this
  override_during = plan
  values = {
    arn = "arn:aws:logs:eu-central-1:111122223333:log-group:/aws/lambda/outreach-prod-ses-event-consumer"
  }
}

override_resource {
  target          = module.pipeline.module.email_feedback.module.unsubscribe.aws_lambda_function.this
  override_during = plan
  values = {
    arn = "arn:aws:lambda:eu-central-1:111122223333:function:outreach-prod-unsubscribe"
  }
}

override_resource {
  target          = module.pipeline.module.email_feedback.module.unsubscribe.aws_cloudwatch_log_group.this
  override_during = plan
  values = {
    arn = "arn:aws:logs:eu-central-1:111122223333:log-group:/aws/lambda/outreach-prod-unsubscribe"
  }
}

# ---- replies (modules/email-inbound): the bucket in the receiving Region (prod's), the queue, the
# processor, the reply domain's identity --------------------------------------------------------------

override_resource {
  target          = module.pipeline.module.email_inbound[0].aws_s3_bucket.inbound
  override_during = plan
  values = {
    arn = "arn:aws:s3:::outreach-prod-inbound-111122223333-eu-central-1"
  }
}

override_resource {
  target          = module.pipeline.module.email_inbound[0].aws_sqs_queue.inbound
  override_during = plan
  values = {
    arn = "arn:aws:sqs:eu-central-1:111122223333:outreach-prod-inbound"
    url = "https://sqs.eu-central-1.amazonaws.com/111122223333/outreach-prod-inbound"
  }
}

override_resource {
  target          = module.pipeline.module.email_inbound[0].module.dlq.aws_sqs_queue.this
  override_during = plan
  values = {
    arn = "arn:aws:sqs:eu-central-1:111122223333:outreach-prod-inbound-dlq"
    url = "https://sqs.eu-central-1.amazonaws.com/111122223333/outreach-prod-inbound-dlq"
  }
}

override_resource {
  target          = module.pipeline.module.email_inbound[0].aws_sns_topic.inbound
  override_during = plan
  values = {
    arn = "arn:aws:sns:eu-central-1:111122223333:outreach-prod-inbound"
  }
}

# The forwarder's identity (receiving and forwarding share prod's Region): the processor sends with it.
override_resource {
  target          = module.pipeline.module.email_inbound[0].aws_sesv2_email_identity.receiving[0]
  override_during = plan
  values = {
    arn = "arn:aws:ses:eu-central-1:111122223333:identity/reply.example.com"
  }
}

override_resource {
  target          = module.pipeline.module.email_inbound[0].module.processor.aws_lambda_function.this
  override_during = plan
  values = {
    arn = "arn:aws:lambda:eu-central-1:111122223333:function:outreach-prod-inbound-processor"
  }
}

override_resource {
  target          = module.pipeline.module.email_inbound[0].module.processor.aws_cloudwatch_log_group.this
  override_during = plan
  values = {
    arn = "arn:aws:logs:eu-central-1:111122223333:log-group:/aws/lambda/outreach-prod-inbound-processor"
  }
}

run "plan_the_prod_roles" {
  command = plan
}
