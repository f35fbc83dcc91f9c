output "function_name" {
  description = "Name of the reconciler function."
  value       = module.function.function_name
}

output "function_arn" {
  description = "ARN of the reconciler function."
  value       = module.function.function_arn
}

output "schedule_arn" {
  description = "ARN of the EventBridge Scheduler schedule that runs the function."
  value       = aws_scheduler_schedule.reconcile.arn
}

output "schedule_name" {
  description = "Name of the schedule (in the default schedule group)."
  value       = aws_scheduler_schedule.reconcile.name
}

output "dlq_url" {
  description = "URL of the DLQ for failed runs (undeliverable events and runs whose retries ran out)."
  value       = module.dlq.url
}

output "dlq_arn" {
  description = "ARN of the DLQ."
  value       = module.dlq.arn
}

output "dlq_name" {
  description = "Name of the DLQ."
  value       = module.dlq.name
}

output "alarm_arns" {
  description = "ARNs of the DLQ alarm and the function's Errors and Throttles alarms."
  value       = concat([module.dlq.alarm_arn], module.function.alarm_arns)
}

output "settings" {
  description = "The function's deployed settings (see modules/lambda-function output settings)."
  value       = module.function.settings
}

output "policy_json" {
  description = "The function role's inline policy."
  value       = module.function.policy_json
}

output "async_invocation" {
  description = "The function's event invoke config (retries, event age, on-failure destination = the DLQ)."
  value       = module.function.async_invocation
}
