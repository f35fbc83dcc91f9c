# One Lambda function with everything it needs to run observably: an execution role whose policy
# names exactly the resources the code uses, a log group with bounded retention, X-Ray tracing,
# the Powertools environment, Errors and Throttles alarms and, for asynchronous invocation, an event
# invoke config with finite retries, a maximum event age and an on-failure destination.

locals {
  runtime = "python3.12" # `make package` installs wheels for CPython 3.12 on manylinux x86_64.

  environment = merge(var.environment, {
    POWERTOOLS_SERVICE_NAME      = var.powertools.service_name
    POWERTOOLS_LOG_LEVEL         = var.powertools.log_level
    POWERTOOLS_METRICS_NAMESPACE = var.powertools.metrics_namespace
  })

  # Lambda sends a spent asynchronous event to the destination with the execution role, so the role
  # needs the destination's write action. The service is read from the ARN.
  destination_arn     = try(var.async_invocation.on_failure_destination_arn, null)
  destination_service = local.destination_arn == null ? null : split(":", local.destination_arn)[2]
  destination_actions = {
    sqs    = ["sqs:SendMessage"]
    sns    = ["sns:Publish"]
    lambda = ["lambda:InvokeFunction"]
    events = ["events:PutEvents"]
    s3     = ["s3:PutObject", "s3:ListBucket"]
  }
  destination_statements = local.destination_arn == null ? [] : [{
    sid     = "SendFailedEventsToDestination"
    actions = local.destination_actions[local.destination_service]
    resources = local.destination_service == "s3" ? [
      local.destination_arn, "${local.destination_arn}/*"
    ] : [local.destination_arn]
  }]

  module_statements = [
    {
      sid       = "WriteOwnLogs"
      actions   = ["logs:CreateLogStream", "logs:PutLogEvents"]
      resources = ["${aws_cloudwatch_log_group.this.arn}:*"]
    },
    {
      # X-Ray's PutTraceSegments and PutTelemetryRecords have no resource-level permissions: the
      # service authorization reference lists no resource type for them, so "*" is the only
      # resource they accept. The actions themselves are named exactly.
      sid       = "WriteTraces"
      actions   = ["xray:PutTraceSegments", "xray:PutTelemetryRecords"]
      resources = ["*"]
    },
  ]

  statements = concat(var.policy_statements, local.module_statements, local.destination_statements)
}

resource "aws_iam_role" "this" {
  name        = "${var.name}-role"
  description = "Execution role of the ${var.name} function."
  assume_role_policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Effect    = "Allow"
      Principal = { Service = "lambda.amazonaws.com" }
      Action    = "sts:AssumeRole"
    }]
  })
}

resource "aws_iam_role_policy" "this" {
  name = "least-privilege"
  role = aws_iam_role.this.id
  policy = jsonencode({
    Version = "2012-10-17"
    # A statement's conditions, grouped by operator, become its Condition block; none, no block.
    Statement = [for s in local.statements : merge(
      {
        Sid      = s.sid
        Effect   = "Allow"
        Action   = s.actions
        Resource = s.resources
      },
      {
        for block in [{
          for test in distinct([for c in try(s.conditions, []) : c.test]) :
          test => { for c in s.conditions : c.variable => c.values if c.test == test }
        }] : "Condition" => block if length(block) > 0
      },
    )]
  })
}

resource "aws_cloudwatch_log_group" "this" {
  #checkov:skip=CKV_AWS_158:CloudWatch Logs encrypts log data at rest; the logs hold no secrets, so a customer managed KMS key adds key management for no gain
  #checkov:skip=CKV_AWS_338:Operational logs only; retention is chosen per environment (log_retention_days) and task outcomes live in the tasks table and the results bucket
  name              = "/aws/lambda/${var.name}"
  retention_in_days = var.log_retention_days
}

resource "aws_lambda_function" "this" {
  #checkov:skip=CKV_AWS_116:A function DLQ covers asynchronous invocations only; mapping-invoked functions fail into their queue's DLQ or the mapping's on-failure destination (CKV_OUT_001/003), async callers use the event invoke config below (CKV_OUT_005)
  #checkov:skip=CKV_AWS_117:The scraper fetches public websites and every function reaches AWS through public endpoints with IAM; a VPC would only add NAT gateways
  #checkov:skip=CKV_AWS_272:Packages are built and deployed by this repository's own pipeline (make package, terraform apply); no signing profile sits in that path
  #checkov:skip=CKV_AWS_173:Lambda encrypts environment variables at rest with an AWS managed key; they hold resource names and settings, no secrets
  function_name    = var.name
  description      = var.description
  role             = aws_iam_role.this.arn
  handler          = var.handler
  runtime          = local.runtime
  architectures    = ["x86_64"]
  filename         = var.package_path
  source_code_hash = filebase64sha256(var.package_path)
  memory_size      = var.memory_mb
  timeout          = var.timeout_seconds

  reserved_concurrent_executions = var.reserved_concurrency == null ? -1 : var.reserved_concurrency

  tracing_config {
    mode = "Active"
  }

  environment {
    variables = local.environment
  }

  # The log group exists before the first invocation (so Lambda never creates one without
  # retention), and the role's policy is in place before any event source mapping checks it.
  depends_on = [aws_cloudwatch_log_group.this, aws_iam_role_policy.this]
}

resource "aws_lambda_function_event_invoke_config" "this" {
  count = var.async_invocation == null ? 0 : 1

  function_name                = aws_lambda_function.this.function_name
  maximum_retry_attempts       = var.async_invocation.maximum_retry_attempts
  maximum_event_age_in_seconds = var.async_invocation.maximum_event_age_in_seconds

  destination_config {
    on_failure {
      destination = var.async_invocation.on_failure_destination_arn
    }
  }
}

resource "aws_cloudwatch_metric_alarm" "errors" {
  alarm_name          = "${var.name}-errors"
  alarm_description   = "The ${var.name} function raised errors (unhandled exceptions or timeouts)."
  namespace           = "AWS/Lambda"
  metric_name         = "Errors"
  dimensions          = { FunctionName = aws_lambda_function.this.function_name }
  statistic           = "Sum"
  period              = var.alarms.period_seconds
  evaluation_periods  = var.alarms.evaluation_periods
  threshold           = var.alarms.errors_threshold
  comparison_operator = "GreaterThanOrEqualToThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.alarm_actions
  ok_actions          = var.alarm_actions
}

resource "aws_cloudwatch_metric_alarm" "throttles" {
  alarm_name          = "${var.name}-throttles"
  alarm_description   = "Invocations of the ${var.name} function were throttled."
  namespace           = "AWS/Lambda"
  metric_name         = "Throttles"
  dimensions          = { FunctionName = aws_lambda_function.this.function_name }
  statistic           = "Sum"
  period              = var.alarms.period_seconds
  evaluation_periods  = var.alarms.evaluation_periods
  threshold           = var.alarms.throttles_threshold
  comparison_operator = "GreaterThanOrEqualToThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.alarm_actions
  ok_actions          = var.alarm_actions
}
