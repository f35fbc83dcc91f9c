# A scheduled reconciler: one function invoked by an EventBridge Scheduler schedule at a fixed rate,
# with both kinds of asynchronous failure caught and alarmed (reused by the scrape and email
# reconcilers):
#
#   schedule (rate) --deliver--> function --error--> Lambda async retries --> DLQ (alarm)
#            `--delivery failed after the schedule's retries--> DLQ (alarm)
#
# A Scheduler rate() schedule without a StartDate starts invoking at once, so the reconciler runs
# right after apply and then every period. An EventBridge rule's rate() "starts when you create the
# rule"; that its first run comes at once is not documented.
# https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html (rate-based schedules)
# https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rate-expressions.html
#
# The schedule's retry policy and DLQ cover only a failed hand-over to Lambda (function missing,
# permission missing, throttled); once Lambda accepted the event, a function error is retried by
# Lambda's asynchronous invocation and then sent to the on-failure destination.
# https://docs.aws.amazon.com/scheduler/latest/UserGuide/configuring-schedule-dlq.html
# https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-retain-records.html

data "aws_caller_identity" "current" {}

locals {
  dlq_name      = "${var.name}-dlq"
  schedule_name = var.name
}

module "dlq" {
  source = "../dead-letter-queue"

  name                      = local.dlq_name
  message_retention_seconds = var.dlq_message_retention_seconds
  alarm_description         = "A ${var.name} run failed after its retries, or could not be delivered; it waits in ${local.dlq_name}."
  alarm_actions             = var.alarm_actions
}

# Environments applied before the DLQ came from modules/dead-letter-queue keep their queue and alarm.
moved {
  from = aws_sqs_queue.dlq
  to   = module.dlq.aws_sqs_queue.this
}

moved {
  from = aws_cloudwatch_metric_alarm.dlq_not_empty
  to   = module.dlq.aws_cloudwatch_metric_alarm.this
}

module "function" {
  source = "../lambda-function"

  name               = var.name
  description        = var.description
  handler            = var.handler
  package_path       = var.package_path
  timeout_seconds    = var.timeout_seconds
  memory_mb          = var.memory_mb
  log_retention_days = var.log_retention_days
  alarm_actions      = var.alarm_actions
  powertools         = var.powertools
  environment        = merge(var.environment, { RECONCILE_PAGE_SIZE = tostring(var.page_size) })
  policy_statements  = var.policy_statements

  async_invocation = {
    maximum_retry_attempts       = var.retry.function_retry_attempts
    maximum_event_age_in_seconds = var.retry.maximum_event_age_in_seconds
    on_failure_destination_arn   = module.dlq.arn
  }
}

# The schedule's execution role: it may invoke this function and send undeliverable events to the
# DLQ, nothing else (Scheduler sends dead letters with the execution role: configuring-schedule-dlq.html;
# the role and its trust policy: https://docs.aws.amazon.com/scheduler/latest/UserGuide/setting-up.html).
resource "aws_iam_role" "schedule" {
  name        = "${substr(var.name, 0, 55)}-schedule" # IAM role names: 64 characters at most
  description = "Execution role of the ${local.schedule_name} schedule."
  assume_role_policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Effect    = "Allow"
      Principal = { Service = "scheduler.amazonaws.com" }
      Action    = "sts:AssumeRole"
      Condition = { StringEquals = { "aws:SourceAccount" = data.aws_caller_identity.current.account_id } }
    }]
  })
}

resource "aws_iam_role_policy" "schedule" {
  name = "least-privilege"
  role = aws_iam_role.schedule.id
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      {
        Sid      = "InvokeReconciler"
        Effect   = "Allow"
        Action   = "lambda:InvokeFunction"
        Resource = module.function.function_arn
      },
      {
        Sid      = "SendUndeliveredToDlq"
        Effect   = "Allow"
        Action   = "sqs:SendMessage"
        Resource = module.dlq.arn
      },
    ]
  })
}

resource "aws_scheduler_schedule" "reconcile" {
  #checkov:skip=CKV_AWS_297:The schedule has no Input, only its target and settings; Scheduler encrypts them at rest with an AWS owned key (https://docs.aws.amazon.com/scheduler/latest/UserGuide/encryption-rest.html), and a customer managed key would protect nothing secret
  name                = local.schedule_name
  description         = "Runs ${var.name} ${var.schedule_expression}."
  schedule_expression = var.schedule_expression
  state               = "ENABLED"

  flexible_time_window {
    mode = "OFF"
  }

  target {
    arn      = module.function.function_arn
    role_arn = aws_iam_role.schedule.arn

    retry_policy {
      maximum_retry_attempts       = var.retry.delivery_retry_attempts
      maximum_event_age_in_seconds = var.retry.maximum_event_age_in_seconds
    }

    dead_letter_config {
      arn = module.dlq.arn
    }
  }

  # The role's policy must exist before the first invocation, which comes at once.
  depends_on = [aws_iam_role_policy.schedule]
}
