variable "name_prefix" {
  description = "Prefix of every resource name (for example outreach-prod): <prefix>-ses-events (rule and queue), <prefix>-ses-events-dlq, <prefix>-ses-event-consumer, <prefix>-unsubscribe."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{1,30}$", var.name_prefix))
    error_message = "name_prefix must be 2-31 characters of a-z, 0-9 and '-', starting with a letter."
  }
}

variable "configuration_set_name" {
  description = "The SES configuration set campaign emails are sent with (modules/email): the rule takes the events SES tags with it (ses:configuration-set)."
  type        = string

  # https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_CreateConfigurationSet.html
  validation {
    condition     = can(regex("^[A-Za-z0-9_-]{1,64}$", var.configuration_set_name))
    error_message = "configuration_set_name must be 1-64 letters, digits, '-' and '_' (an SES configuration set name)."
  }
}

variable "schedules" {
  description = "The email schedules' group (EMAIL_SCHEDULE_GROUP) and the ARN pattern of its schedules, schedule/<group>/* (modules/email outputs schedule_group_name and schedules_arn): a stopped address's cancelled emails have their schedules deleted there."
  type = object({
    group_name = string
    arn        = string
  })
}

variable "tasks_table" {
  description = "The tasks table: name, ARN and the ARN of its recipient-emails index (modules/tasks-table)."
  type = object({
    name                       = string
    arn                        = string
    recipient_emails_index_arn = string
  })
}

variable "contact_ledger" {
  description = "The contact ledger: name, ARN and the dynamodb:LeadingKeys patterns of its address and domain records (modules/contact-ledger)."
  type = object({
    name = string
    arn  = string
    key_patterns = object({
      address = string
      domain  = string
    })
  })
}

variable "handlers" {
  description = "Python entry points of the SES event consumer and the unsubscribe endpoint (from modules/outreach-pipeline/functions.json)."
  type = object({
    consumer    = string
    unsubscribe = string
  })
}

variable "packages" {
  description = "Deployment zips from `make package` of the SES event consumer and the unsubscribe endpoint."
  type = object({
    consumer    = string
    unsubscribe = string
  })
}

variable "soft_bounce_limit" {
  description = <<-EOT
    Soft bounces of distinct messages after which an address is recorded as bounced and stopped
    (SOFT_BOUNCE_LIMIT). SES reports a soft bounce only once it has stopped retrying that message, so
    each one is a mail that did not arrive; with the default, 3, the third such message stops the
    address (why: "3 soft bounces"). 1-20.
  EOT
  type        = number
  default     = 3
  nullable    = false

  validation {
    condition     = var.soft_bounce_limit >= 1 && var.soft_bounce_limit <= 20 && floor(var.soft_bounce_limit) == var.soft_bounce_limit
    error_message = "soft_bounce_limit must be a whole number from 1 to 20."
  }
}

variable "queue" {
  description = <<-EOT
    The ses-events queue and its DLQ. The visibility timeout must be at least six times the
    consumer's timeout (AWS's guidance for SQS event sources), and the DLQ must keep messages longer
    than the queue (a moved message keeps its original enqueue time). A record the consumer fails
    max_receive_count times goes to the DLQ.
  EOT
  type = object({
    visibility_timeout_seconds    = optional(number, 360)
    message_retention_seconds     = optional(number, 345600)
    max_receive_count             = optional(number, 5)
    dlq_message_retention_seconds = optional(number, 1209600)
  })
  default  = {}
  nullable = false

  # https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html (visibility timeout)
  validation {
    condition     = var.queue.visibility_timeout_seconds >= 6 * var.consumer.timeout_seconds && var.queue.visibility_timeout_seconds <= 43200
    error_message = "queue.visibility_timeout_seconds must be at least 6 x consumer.timeout_seconds and at most 43200 (12 hours)."
  }

  validation {
    condition = alltrue([
      for r in [var.queue.message_retention_seconds, var.queue.dlq_message_retention_seconds] : r >= 60 && r <= 1209600
    ])
    error_message = "Queue retention periods must be between 60 and 1209600 seconds (14 days)."
  }

  # https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html
  validation {
    condition     = var.queue.dlq_message_retention_seconds > var.queue.message_retention_seconds
    error_message = "queue.dlq_message_retention_seconds must be longer than queue.message_retention_seconds, or messages expire in the DLQ before anyone sees them."
  }

  validation {
    condition     = var.queue.max_receive_count >= 1 && var.queue.max_receive_count <= 1000 && floor(var.queue.max_receive_count) == var.queue.max_receive_count
    error_message = "queue.max_receive_count must be a whole number from 1 to 1000."
  }
}

variable "consumer" {
  description = "The SES event consumer: timeout, memory, reserved concurrency (at least the mapping's maximum concurrency, so the mapping's batches are not throttled) and log level."
  type = object({
    timeout_seconds      = optional(number, 60)
    memory_mb            = optional(number, 256)
    reserved_concurrency = optional(number, 5)
    log_level            = optional(string, "INFO")
  })
  default  = {}
  nullable = false

  validation {
    condition     = var.consumer.reserved_concurrency >= 1 && floor(var.consumer.reserved_concurrency) == var.consumer.reserved_concurrency
    error_message = "consumer.reserved_concurrency must be a whole number of at least 1."
  }
}

variable "mapping" {
  description = "The ses-events queue's event source mapping: records per batch, batching window and maximum concurrency."
  type = object({
    batch_size                         = optional(number, 10)
    maximum_batching_window_in_seconds = optional(number, 0)
    maximum_concurrency                = optional(number, 5)
  })
  default  = {}
  nullable = false

  # https://docs.aws.amazon.com/lambda/latest/api/API_ScalingConfig.html (2-1000)
  validation {
    condition     = var.mapping.maximum_concurrency >= 2 && var.mapping.maximum_concurrency <= 1000
    error_message = "mapping.maximum_concurrency must be between 2 and 1000."
  }

  validation {
    condition     = var.mapping.maximum_concurrency <= var.consumer.reserved_concurrency
    error_message = "mapping.maximum_concurrency must not exceed consumer.reserved_concurrency, or the mapping's invocations are throttled."
  }

  validation {
    condition     = var.mapping.maximum_batching_window_in_seconds >= 0 && var.mapping.maximum_batching_window_in_seconds <= 300
    error_message = "mapping.maximum_batching_window_in_seconds must be between 0 and 300."
  }

  # https://docs.aws.amazon.com/lambda/latest/api/API_CreateEventSourceMapping.html (BatchSize)
  validation {
    condition = var.mapping.batch_size >= 1 && floor(var.mapping.batch_size) == var.mapping.batch_size && (
      var.mapping.maximum_batching_window_in_seconds == 0 ? var.mapping.batch_size <= 10 : var.mapping.batch_size <= 10000
    )
    error_message = "mapping.batch_size must be 1-10 without a batching window, and at most 10000 with one."
  }
}

variable "unsubscribe" {
  description = <<-EOT
    The unsubscribe endpoint: timeout, memory, reserved concurrency and log level. The endpoint is
    public; its reserved concurrency caps what a flood of requests can take from the account's
    concurrency (requests beyond it are refused with 429 until one finishes).
  EOT
  type = object({
    timeout_seconds      = optional(number, 10)
    memory_mb            = optional(number, 256)
    reserved_concurrency = optional(number, 10)
    log_level            = optional(string, "INFO")
  })
  default  = {}
  nullable = false

  validation {
    condition     = var.unsubscribe.reserved_concurrency >= 1 && floor(var.unsubscribe.reserved_concurrency) == var.unsubscribe.reserved_concurrency
    error_message = "unsubscribe.reserved_concurrency must be a whole number of at least 1: 0 would disable the endpoint."
  }
}

variable "unsubscribe_key_deletion_window_days" {
  description = "Days KMS waits before deleting the unsubscribe key once it is scheduled for deletion (7-30); every link made with it stops working then."
  type        = number
  default     = 30
  nullable    = false

  # https://docs.aws.amazon.com/kms/latest/APIReference/API_ScheduleKeyDeletion.html
  validation {
    condition     = var.unsubscribe_key_deletion_window_days >= 7 && var.unsubscribe_key_deletion_window_days <= 30 && floor(var.unsubscribe_key_deletion_window_days) == var.unsubscribe_key_deletion_window_days
    error_message = "unsubscribe_key_deletion_window_days must be a whole number from 7 to 30."
  }
}

variable "powertools_metrics_namespace" {
  description = "CloudWatch namespace of the functions' Powertools metrics."
  type        = string
}

variable "log_retention_days" {
  description = "Days CloudWatch keeps the functions' logs."
  type        = number
  default     = 30
  nullable    = false
}

variable "alarm_actions" {
  description = "ARNs notified by the DLQ and function alarms (the environment's SNS topic)."
  type        = list(string)
}
