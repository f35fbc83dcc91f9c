output "dispatch_mode" {
  description = "The mode deployed: lambda or pipe."
  value       = var.dispatch_mode
}

output "dispatcher_function_name" {
  description = "Name of the dispatcher function (null in pipe mode)."
  value       = local.lambda_mode ? module.dispatcher[0].function_name : null
}

output "dispatcher_function_arn" {
  description = "ARN of the dispatcher function (null in pipe mode)."
  value       = local.lambda_mode ? module.dispatcher[0].function_arn : null
}

output "mapping_uuid" {
  description = "UUID of the stream-to-dispatcher event source mapping (null in pipe mode)."
  value       = local.lambda_mode ? aws_lambda_event_source_mapping.stream[0].uuid : null
}

output "failure_bucket_name" {
  description = "Bucket receiving batches the mapping gave up on (null in pipe mode)."
  value       = local.lambda_mode ? module.failure_bucket[0].name : null
}

output "failure_bucket_arn" {
  description = "ARN of the failure bucket (null in pipe mode)."
  value       = local.lambda_mode ? module.failure_bucket[0].arn : null
}

output "pipe_name" {
  description = "Name of the dispatch pipe (null in lambda mode)."
  value       = local.pipe_mode ? aws_pipes_pipe.dispatch[0].name : null
}

output "pipe_arn" {
  description = "ARN of the dispatch pipe (null in lambda mode)."
  value       = local.pipe_mode ? aws_pipes_pipe.dispatch[0].arn : null
}

output "pipe_dlq_url" {
  description = "URL of the pipe's DLQ (null in lambda mode)."
  value       = local.pipe_mode ? module.pipe_dlq[0].url : null
}

output "pipe_dlq_name" {
  description = "Name of the pipe's DLQ (null in lambda mode)."
  value       = local.pipe_mode ? module.pipe_dlq[0].name : null
}

output "filter_patterns" {
  description = "The stream filter patterns both modes use (JSON strings)."
  value       = local.becomes_pending_patterns
}

output "alarm_arns" {
  description = "ARNs of this stage's alarms."
  value = local.lambda_mode ? concat(
    [aws_cloudwatch_metric_alarm.iterator_age[0].arn], module.dispatcher[0].alarm_arns
  ) : [module.pipe_dlq[0].alarm_arn]
}

output "dispatcher_settings" {
  description = "The dispatcher's deployed settings (null in pipe mode; see modules/lambda-function output settings)."
  value       = local.lambda_mode ? module.dispatcher[0].settings : null
}

output "dispatcher_policy_json" {
  description = "The dispatcher role's inline policy (null in pipe mode)."
  value       = local.lambda_mode ? module.dispatcher[0].policy_json : null
}

output "pipe_policy_json" {
  description = "The pipe role's inline policy (null in lambda mode)."
  value       = local.pipe_mode ? aws_iam_role_policy.pipe[0].policy : null
}

output "dispatch_horizon_seconds" {
  description = "Longest time a scrape task can stay Pending while the stream may still dispatch it (maximum record age plus one dispatcher timeout); the scrape reconciler waits this long before it re-sends a Pending task."
  value       = local.dispatch_horizon_seconds
}
