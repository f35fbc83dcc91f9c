output "function_name" {
  description = "Function name."
  value       = aws_lambda_function.this.function_name
}

output "function_arn" {
  description = "Unqualified function ARN."
  value       = aws_lambda_function.this.arn
}

output "role_arn" {
  description = "Execution role ARN."
  value       = aws_iam_role.this.arn
}

output "role_name" {
  description = "Execution role name."
  value       = aws_iam_role.this.name
}

output "log_group_name" {
  description = "CloudWatch log group of the function."
  value       = aws_cloudwatch_log_group.this.name
}

output "policy_json" {
  description = "The execution role's inline policy document."
  value       = aws_iam_role_policy.this.policy
}

output "alarm_arns" {
  description = "ARNs of the Errors and Throttles alarms."
  value       = [aws_cloudwatch_metric_alarm.errors.arn, aws_cloudwatch_metric_alarm.throttles.arn]
}

output "settings" {
  description = "The function's deployed settings (handler, runtime, timeout, memory, reserved concurrency, tracing, environment)."
  value = {
    handler                        = aws_lambda_function.this.handler
    runtime                        = aws_lambda_function.this.runtime
    timeout                        = aws_lambda_function.this.timeout
    memory_size                    = aws_lambda_function.this.memory_size
    reserved_concurrent_executions = aws_lambda_function.this.reserved_concurrent_executions
    tracing_mode                   = one(aws_lambda_function.this.tracing_config).mode
    environment                    = one(aws_lambda_function.this.environment).variables
  }
}

output "async_invocation" {
  description = "The event invoke config as planned (retries, event age, on-failure destination); null without async_invocation."
  value = var.async_invocation == null ? null : {
    maximum_retry_attempts       = aws_lambda_function_event_invoke_config.this[0].maximum_retry_attempts
    maximum_event_age_in_seconds = aws_lambda_function_event_invoke_config.this[0].maximum_event_age_in_seconds
    on_failure_destination_arn   = one(one(aws_lambda_function_event_invoke_config.this[0].destination_config).on_failure).destination
  }
}
