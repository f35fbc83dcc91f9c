variable "name" {
  description = "Queue name (for example outreach-prod-scrape-dlq); the alarm is named <name>-not-empty."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9_-]{1,80}$", var.name))
    error_message = "name must be 1-80 letters, digits, '-' and '_' (a standard SQS queue name)."
  }
}

variable "message_retention_seconds" {
  description = "How long the queue keeps a message before SQS deletes it (60-1209600 s, 14 days at most)."
  type        = number

  validation {
    condition     = var.message_retention_seconds >= 60 && var.message_retention_seconds <= 1209600 && floor(var.message_retention_seconds) == var.message_retention_seconds
    error_message = "message_retention_seconds must be a whole number from 60 to 1209600 (14 days)."
  }
}

variable "redrive_source_queue_arns" {
  description = <<-EOT
    Queues whose redrive policy names this one: when set, the redrive allow policy accepts messages
    from these queues only (byQueue, at most 10); empty leaves the queue without a redrive allow policy.
  EOT
  type        = list(string)
  default     = []
  nullable    = false

  validation {
    condition     = length(var.redrive_source_queue_arns) <= 10
    error_message = "A redrive allow policy names at most 10 source queues."
  }

  validation {
    condition     = alltrue([for arn in var.redrive_source_queue_arns : can(regex("^arn:[a-z-]+:sqs:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]{1,80}$", arn))])
    error_message = "redrive_source_queue_arns must be SQS queue ARNs."
  }
}

variable "alarm_description" {
  description = "What a message in the queue means and who put it there, shown with the alarm."
  type        = string

  validation {
    condition     = length(var.alarm_description) <= 1024
    error_message = "alarm_description must be at most 1024 characters."
  }
}

variable "alarm_actions" {
  description = "ARNs notified when the first message arrives and when the queue is empty again (the environment's SNS topic)."
  type        = list(string)
}
