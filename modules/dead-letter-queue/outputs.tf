output "arn" {
  description = "ARN of the queue (the redrive target, on-failure destination or dead-letter config)."
  value       = aws_sqs_queue.this.arn
}

output "url" {
  description = "URL of the queue."
  value       = aws_sqs_queue.this.url
}

output "name" {
  description = "Name of the queue."
  value       = aws_sqs_queue.this.name
}

output "message_retention_seconds" {
  description = "How long the queue keeps a message, in seconds."
  value       = aws_sqs_queue.this.message_retention_seconds
}

output "redrive_allow_policy" {
  description = "The queue's redrive allow policy (JSON), or null when it has no redrive sources."
  value       = length(var.redrive_source_queue_arns) > 0 ? aws_sqs_queue.this.redrive_allow_policy : null
}

output "alarm_name" {
  description = "Name of the alarm on the queue's first visible message."
  value       = aws_cloudwatch_metric_alarm.this.alarm_name
}

output "alarm_arn" {
  description = "ARN of the alarm on the queue's first visible message."
  value       = aws_cloudwatch_metric_alarm.this.arn
}
