output "name" {
  description = "Table name (the functions' TASKS_TABLE)."
  value       = aws_dynamodb_table.this.name
}

output "arn" {
  description = "Table ARN."
  value       = aws_dynamodb_table.this.arn
}

output "stream_arn" {
  description = "ARN of the table's NEW_AND_OLD_IMAGES stream."
  value       = aws_dynamodb_table.this.stream_arn
}

output "open_tasks_index_name" {
  description = "Name of the sparse index of Pending and Running tasks."
  value       = local.open_tasks_index
}

output "open_tasks_index_arn" {
  description = "ARN of the sparse index (for the reconcilers' Query permission)."
  value       = "${aws_dynamodb_table.this.arn}/index/${local.open_tasks_index}"
}

output "recipient_emails_index_name" {
  description = "Name of the sparse index of email tasks by normalised recipient (recipient_key), keys only."
  value       = local.recipient_emails_index
}

output "recipient_emails_index_arn" {
  description = "ARN of the recipient-emails index (for the Query permission of the function that cancels a stopped address's emails)."
  value       = "${aws_dynamodb_table.this.arn}/index/${local.recipient_emails_index}"
}

output "reply_handles_index_name" {
  description = "Name of the sparse index of email tasks by the handle of their reply address (reply_handle), keys only."
  value       = local.reply_handles_index
}

output "reply_handles_index_arn" {
  description = "ARN of the reply-handles index (for the Query permission of the inbound processor, which finds the task a reply answers)."
  value       = "${aws_dynamodb_table.this.arn}/index/${local.reply_handles_index}"
}

output "jobs_index_name" {
  description = "Name of the sparse index of the jobs' own rows by job_kind and created_at (the command line's job list)."
  value       = local.jobs_index
}

output "jobs_index_arn" {
  description = "ARN of the jobs index (for the operator's Query permission)."
  value       = "${aws_dynamodb_table.this.arn}/index/${local.jobs_index}"
}

output "campaign_open_index_name" {
  description = "Name of the sparse index of open email tasks by campaign, status and shard (campaign_open_key) and send_at (the command line's campaign status and cancel)."
  value       = local.campaign_open_index
}

output "campaign_open_index_arn" {
  description = "ARN of the campaign-open index (for the operator's Query permission; no function queries it)."
  value       = "${aws_dynamodb_table.this.arn}/index/${local.campaign_open_index}"
}

output "ttl_attribute" {
  description = "Attribute whose epoch-seconds value expires an item."
  value       = local.ttl_attribute
}

output "claim_lease_margin_seconds" {
  description = "Seconds a claim outlives the invocation that took it (CLAIM_LEASE_MARGIN_SECONDS of the functions that claim tasks)."
  value       = var.claim_lease_margin_seconds
}

output "open_index_shards" {
  description = "Shards the open-tasks index key is written over (OPEN_INDEX_SHARDS of the functions and the command line that create or read open tasks)."
  value       = var.open_index_shards
}
