mock_provider "aws" {
  source          = "../../tests/terraform/mocks"
  override_during = plan
}

override_resource {
  target          = aws_cloudwatch_log_group.this
  override_during = plan
  values = {
    arn = "arn:aws:logs:eu-central-1:111122223333:log-group:/aws/lambda/outreach-test-worker"
  }
}

variables {
  name            = "outreach-test-worker"
  handler         = "outreach.scraper.lambda_handler"
  package_path    = "../../tests/terraform/fixtures/packages/scraper.zip"
  timeout_seconds = 60
  powertools = {
    service_name      = "worker"
    metrics_namespace = "OutreachPipeline/test"
  }
  environment = { TASKS_TABLE = "outreach-test-tasks" }
  policy_statements = [
    {
      sid       = "ReadTasks"
      actions   = ["dynamodb:GetItem"]
      resources = ["arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-tasks"]
    },
  ]
  alarm_actions = ["arn:aws:sns:eu-central-1:111122223333:outreach-test-alarms"]
}

run "the_function_planned_with_the_files_variables" {
  command = plan

  # function_runs_python312_with_active_tracing_from_the_package
  assert {
    condition     = aws_lambda_function.this.runtime == "python3.12" && aws_lambda_function.this.architectures == tolist(["x86_64"])
    error_message = "Packages are built for CPython 3.12 on x86_64."
  }

  assert {
    condition     = one(aws_lambda_function.this.tracing_config).mode == "Active"
    error_message = "X-Ray tracing must be Active."
  }

  assert {
    condition     = aws_lambda_function.this.source_code_hash == filebase64sha256(var.package_path)
    error_message = "The code hash must follow the package file."
  }

  assert {
    condition     = aws_lambda_function.this.reserved_concurrent_executions == -1
    error_message = "Without reserved_concurrency the function stays in the unreserved pool."
  }

  # environment_carries_powertools_settings_and_caller_variables
  assert {
    condition = one(aws_lambda_function.this.environment).variables == tomap({
      TASKS_TABLE                  = "outreach-test-tasks"
      POWERTOOLS_SERVICE_NAME      = "worker"
      POWERTOOLS_LOG_LEVEL         = "INFO"
      POWERTOOLS_METRICS_NAMESPACE = "OutreachPipeline/test"
    })
    error_message = "The environment must hold the caller's variables and the Powertools settings."
  }

  # log_group_has_bounded_retention
  assert {
    condition     = aws_cloudwatch_log_group.this.name == "/aws/lambda/outreach-test-worker" && aws_cloudwatch_log_group.this.retention_in_days == 30
    error_message = "The function's log group must exist with a retention."
  }

  # errors_and_throttles_alarms_notify_the_topic
  assert {
    condition = (
      aws_cloudwatch_metric_alarm.errors.metric_name == "Errors" &&
      aws_cloudwatch_metric_alarm.errors.dimensions.FunctionName == "outreach-test-worker" &&
      aws_cloudwatch_metric_alarm.errors.threshold == 1 &&
      aws_cloudwatch_metric_alarm.errors.alarm_actions == toset(var.alarm_actions)
    )
    error_message = "An Errors alarm on the function must notify the alarm topic."
  }

  assert {
    condition = (
      aws_cloudwatch_metric_alarm.throttles.metric_name == "Throttles" &&
      aws_cloudwatch_metric_alarm.throttles.dimensions.FunctionName == "outreach-test-worker" &&
      aws_cloudwatch_metric_alarm.throttles.alarm_actions == toset(var.alarm_actions)
    )
    error_message = "A Throttles alarm on the function must notify the alarm topic."
  }

  # policy_names_exact_actions_and_resources
  assert {
    condition = alltrue(flatten([
      for s in jsondecode(aws_iam_role_policy.this.policy).Statement : [for a in s.Action : !strcontains(a, "*")]
    ]))
    error_message = "No statement may use a wildcard action."
  }

  assert {
    condition = alltrue([
      for s in jsondecode(aws_iam_role_policy.this.policy).Statement :
      s.Sid == "WriteTraces" || !contains(s.Resource, "*")
    ])
    error_message = "Only the X-Ray statement may use the \"*\" resource (X-Ray has no resource-level permissions)."
  }

  assert {
    condition = {
      for s in jsondecode(aws_iam_role_policy.this.policy).Statement : s.Sid => [s.Action, s.Resource]
      } == {
      ReadTasks    = [["dynamodb:GetItem"], ["arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-tasks"]]
      WriteOwnLogs = [["logs:CreateLogStream", "logs:PutLogEvents"], ["arn:aws:logs:eu-central-1:111122223333:log-group:/aws/lambda/outreach-test-worker:*"]]
      WriteTraces  = [["xray:PutTraceSegments", "xray:PutTelemetryRecords"], ["*"]]
    }
    error_message = "The policy must hold the caller's statements, the function's own log group and X-Ray, nothing else."
  }

  # a_statement_without_conditions_has_no_condition_block
  assert {
    condition     = alltrue([for s in jsondecode(aws_iam_role_policy.this.policy).Statement : !contains(keys(s), "Condition")])
    error_message = "A statement given no conditions carries no Condition element."
  }

  # synchronous_function_has_no_event_invoke_config
  assert {
    condition     = length(aws_lambda_function_event_invoke_config.this) == 0
    error_message = "Without async_invocation no event invoke config is created."
  }
}

run "conditions_become_the_statements_condition_block_grouped_by_operator" {
  command = plan

  variables {
    policy_statements = [
      {
        sid       = "WriteOwnRows"
        actions   = ["dynamodb:UpdateItem"]
        resources = ["arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-tasks"]
        conditions = [
          { test = "ForAllValues:StringLike", variable = "dynamodb:LeadingKeys", values = ["scrape#*", "job#*#?"] },
          { test = "Null", variable = "dynamodb:LeadingKeys", values = ["false"] },
          { test = "StringEquals", variable = "aws:RequestedRegion", values = ["eu-central-1"] },
          { test = "StringEquals", variable = "aws:PrincipalAccount", values = ["111122223333"] },
        ]
      },
      {
        sid       = "ReadTasks"
        actions   = ["dynamodb:GetItem"]
        resources = ["arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-tasks"]
      },
    ]
  }

  assert {
    condition = {
      for s in jsondecode(aws_iam_role_policy.this.policy).Statement : s.Sid => lookup(s, "Condition", null)
      } == {
      WriteOwnRows = {
        "ForAllValues:StringLike" = { "dynamodb:LeadingKeys" = ["scrape#*", "job#*#?"] }
        Null                      = { "dynamodb:LeadingKeys" = ["false"] }
        StringEquals              = { "aws:RequestedRegion" = ["eu-central-1"], "aws:PrincipalAccount" = ["111122223333"] }
      }
      ReadTasks    = null
      WriteOwnLogs = null
      WriteTraces  = null
    }
    error_message = "Each operator is one key of the Condition block, holding every key given with it; a statement without conditions has none."
  }
}

run "each_refused_input_fails_its_own_validation_1" {
  command = plan

  variables {
    # rejects_one_operator_on_one_key_twice
    policy_statements = [{
      sid       = "Twice"
      actions   = ["dynamodb:UpdateItem"]
      resources = ["arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-tasks"]
      conditions = [
        { test = "ForAllValues:StringLike", variable = "dynamodb:LeadingKeys", values = ["scrape#*"] },
        { test = "ForAllValues:StringLike", variable = "dynamodb:LeadingKeys", values = ["email#*"] },
      ]
    }]
    # rejects_more_than_two_async_retries
    async_invocation = {
      maximum_retry_attempts       = 3
      maximum_event_age_in_seconds = 3600
      on_failure_destination_arn   = "arn:aws:sqs:eu-central-1:111122223333:q"
    }
    # rejects_a_missing_package
    package_path = "../../dist/does-not-exist.zip"
    # rejects_a_timeout_above_900_seconds
    timeout_seconds = 901
    # rejects_memory_below_128_mb
    memory_mb = 64
    # rejects_a_retention_cloudwatch_does_not_offer
    log_retention_days = 2
    # rejects_reserved_aws_environment_keys
    environment = { AWS_REGION = "eu-central-1" }
    # rejects_negative_reserved_concurrency
    reserved_concurrency = -1
  }

  expect_failures = [
    var.policy_statements,
    var.async_invocation,
    var.package_path,
    var.timeout_seconds,
    var.memory_mb,
    var.log_retention_days,
    var.environment,
    var.reserved_concurrency,
  ]
}

run "each_refused_input_fails_its_own_validation_2" {
  command = plan

  variables {
    # rejects_a_condition_without_values
    policy_statements = [{
      sid        = "Empty"
      actions    = ["dynamodb:UpdateItem"]
      resources  = ["arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-tasks"]
      conditions = [{ test = "ForAllValues:StringLike", variable = "dynamodb:LeadingKeys", values = [] }]
    }]
    # rejects_an_event_age_outside_60_to_21600
    async_invocation = {
      maximum_retry_attempts       = 2
      maximum_event_age_in_seconds = 21601
      on_failure_destination_arn   = "arn:aws:sqs:eu-central-1:111122223333:q"
    }
    # rejects_an_unknown_log_level
    powertools = { service_name = "worker", metrics_namespace = "ns", log_level = "TRACE" }
  }

  expect_failures = [
    var.policy_statements,
    var.async_invocation,
    var.powertools,
  ]
}

run "each_refused_input_fails_its_own_validation_3" {
  command = plan

  variables {
    # rejects_a_wildcard_action
    policy_statements = [{ sid = "Everything", actions = ["sqs:*"], resources = ["arn:aws:sqs:eu-central-1:111122223333:q"] }]
    # rejects_a_destination_that_is_not_a_supported_arn
    async_invocation = {
      maximum_retry_attempts       = 2
      maximum_event_age_in_seconds = 3600
      on_failure_destination_arn   = "arn:aws:dynamodb:eu-central-1:111122223333:table/t"
    }
  }

  expect_failures = [
    var.policy_statements,
    var.async_invocation,
  ]
}

run "each_refused_input_fails_its_own_validation_4" {
  command = plan

  variables {
    # rejects_the_star_action
    policy_statements = [{ sid = "Everything", actions = ["*"], resources = ["arn:aws:sqs:eu-central-1:111122223333:q"] }]
  }

  expect_failures = [
    var.policy_statements,
  ]
}

run "each_refused_input_fails_its_own_validation_5" {
  command = plan

  variables {
    # rejects_a_star_resource
    policy_statements = [{ sid = "AnyQueue", actions = ["sqs:SendMessage"], resources = ["*"] }]
  }

  expect_failures = [
    var.policy_statements,
  ]
}

run "async_function_gets_finite_retries_age_and_failure_destination" {
  command = plan

  variables {
    reserved_concurrency = 5
    async_invocation = {
      maximum_retry_attempts       = 2
      maximum_event_age_in_seconds = 3600
      on_failure_destination_arn   = "arn:aws:sqs:eu-central-1:111122223333:outreach-test-async-dlq"
    }
  }

  assert {
    condition = (
      aws_lambda_function_event_invoke_config.this[0].maximum_retry_attempts == 2 &&
      aws_lambda_function_event_invoke_config.this[0].maximum_event_age_in_seconds == 3600 &&
      one(one(aws_lambda_function_event_invoke_config.this[0].destination_config).on_failure).destination == "arn:aws:sqs:eu-central-1:111122223333:outreach-test-async-dlq"
    )
    error_message = "The event invoke config must carry the retries, the maximum age and the on-failure destination."
  }

  assert {
    condition = anytrue([
      for s in jsondecode(aws_iam_role_policy.this.policy).Statement :
      s.Action == ["sqs:SendMessage"] && s.Resource == ["arn:aws:sqs:eu-central-1:111122223333:outreach-test-async-dlq"]
    ])
    error_message = "The role must be allowed to send to the on-failure destination, and only to it."
  }

  assert {
    condition     = aws_lambda_function.this.reserved_concurrent_executions == 5
    error_message = "reserved_concurrency must reach the function."
  }
}
