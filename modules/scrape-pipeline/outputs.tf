output "queue_url" {
  description = "URL of the scrape queue (the dispatcher's SCRAPE_QUEUE_URL)."
  value       = aws_sqs_queue.queue.url
}

output "queue_arn" {
  description = "ARN of the scrape queue."
  value       = aws_sqs_queue.queue.arn
}

output "queue_name" {
  description = "Name of the scrape queue."
  value       = aws_sqs_queue.queue.name
}

output "dlq_url" {
  description = "URL of the scrape DLQ."
  value       = module.dlq.url
}

output "dlq_arn" {
  description = "ARN of the scrape DLQ."
  value       = module.dlq.arn
}

output "dlq_name" {
  description = "Name of the scrape DLQ."
  value       = module.dlq.name
}

output "results_bucket_name" {
  description = "Bucket holding results/<job_id>/<task_id>.json."
  value       = module.results_bucket.name
}

output "results_bucket_arn" {
  description = "ARN of the results bucket."
  value       = module.results_bucket.arn
}

output "results_expiration_days" {
  description = "Days after which the results bucket's lifecycle rule expires a scrape result."
  value       = module.results_bucket.expiration_days
}

output "scraper_function_name" {
  description = "Name of the scraper function."
  value       = module.scraper.function_name
}

output "scraper_function_arn" {
  description = "ARN of the scraper function."
  value       = module.scraper.function_arn
}

output "mapping_uuid" {
  description = "UUID of the queue-to-scraper event source mapping."
  value       = aws_lambda_event_source_mapping.scrape_queue.uuid
}

output "alarm_arns" {
  description = "ARNs of the DLQ alarm and the scraper's Errors and Throttles alarms."
  value       = concat([module.dlq.alarm_arn], module.scraper.alarm_arns)
}

output "scraper_settings" {
  description = "The scraper's deployed settings (see modules/lambda-function output settings)."
  value       = module.scraper.settings
}

output "scraper_policy_json" {
  description = "The scraper role's inline policy."
  value       = module.scraper.policy_json
}

output "redelivery_horizon_seconds" {
  description = "Longest time a scrape task can stay unchanged while SQS may still deliver its message (visibility or longest retry delay, plus function timeout and lease margin); the scrape reconciler waits this long before it re-queues a Running task."
  value       = local.redelivery_horizon_seconds
}

output "max_receive_count" {
  description = "Receives a scrape message gets before SQS moves it to the DLQ."
  value       = var.queue.max_receive_count
}

output "mapping_maximum_concurrency" {
  description = "The scrape mapping's maximum concurrency as applied (the dashboard's scraper capacity line)."
  value       = aws_lambda_event_source_mapping.scrape_queue.scaling_config[0].maximum_concurrency
}
