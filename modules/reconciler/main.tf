# A scheduled reconciler: one function invoked by an EventBridge rule on a fixed schedule, with both
# kinds of asynchronous failure caught and alarmed (reused by the scrape and email reconcilers):
#
#   rule (rate) --deliver--> function --error--> Lambda async retries --> DLQ (alarm)
#          `--delivery failed after the target's retries--> DLQ (alarm)
#
# The rule's retry policy and DLQ cover only a failed hand-over to Lambda (function missing,
# permission missing, throttled); once Lambda accepted the event, a function error is retried by
# Lambda's asynchronous invocation and then sent to the on-failure destination.
# https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html
# https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-retain-records.html

locals {
  dlq_name  = "${var.name}-dlq"
  rule_name = var.name
}

resource "aws_sqs_queue" "dlq" {
  name                      = local.dlq_name
  message_retention_seconds = var.dlq_message_retention_seconds
  sqs_managed_sse_enabled   = true
}

# EventBridge sends undeliverable events to the DLQ with its service principal, so the queue must
# allow it, for this rule only. Lambda sends exhausted events with the function's role, which the
# lambda-function module grants through async_invocation.
resource "aws_sqs_queue_policy" "dlq" {
  queue_url = aws_sqs_queue.dlq.id
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid       = "RuleDeadLetters"
      Effect    = "Allow"
      Principal = { Service = "events.amazonaws.com" }
      Action    = "sqs:SendMessage"
      Resource  = aws_sqs_queue.dlq.arn
      Condition = { ArnEquals = { "aws:SourceArn" = aws_cloudwatch_event_rule.schedule.arn } }
    }]
  })
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
  environment        = var.environment
  policy_statements  = var.policy_statements

  async_invocation = {
    maximum_retry_attempts       = var.retry.function_retry_attempts
    maximum_event_age_in_seconds = var.retry.maximum_event_age_in_seconds
    on_failure_destination_arn   = aws_sqs_queue.dlq.arn
  }
}

resource "aws_cloudwatch_event_rule" "schedule" {
  name                = local.rule_name
  description         = "Runs ${var.name} ${var.schedule_expression}."
  schedule_expression = var.schedule_expression
  state               = "ENABLED"
}

resource "aws_cloudwatch_event_target" "function" {
  rule = aws_cloudwatch_event_rule.schedule.name
  arn  = module.function.function_arn

  retry_policy {
    maximum_retry_attempts       = var.retry.delivery_retry_attempts
    maximum_event_age_in_seconds = var.retry.maximum_event_age_in_seconds
  }

  dead_letter_config {
    arn = aws_sqs_queue.dlq.arn
  }
}

resource "aws_lambda_permission" "rule" {
  statement_id  = "AllowScheduleRule"
  action        = "lambda:InvokeFunction"
  function_name = module.function.function_name
  principal     = "events.amazonaws.com"
  source_arn    = aws_cloudwatch_event_rule.schedule.arn
}

resource "aws_cloudwatch_metric_alarm" "dlq_not_empty" {
  alarm_name          = "${local.dlq_name}-not-empty"
  alarm_description   = "A ${var.name} run failed after its retries, or could not be delivered; it waits in ${local.dlq_name}."
  namespace           = "AWS/SQS"
  metric_name         = "ApproximateNumberOfMessagesVisible"
  dimensions          = { QueueName = aws_sqs_queue.dlq.name }
  statistic           = "Maximum"
  period              = 60
  evaluation_periods  = 1
  threshold           = 1
  comparison_operator = "GreaterThanOrEqualToThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.alarm_actions
  ok_actions          = var.alarm_actions
}
