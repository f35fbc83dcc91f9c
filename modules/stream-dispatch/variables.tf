variable "name_prefix" {
  description = "Prefix of every resource name (for example outreach-prod)."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{1,40}$", var.name_prefix))
    error_message = "name_prefix must be 2-41 characters of a-z, 0-9 and '-', starting with a letter."
  }
}

variable "dispatch_mode" {
  description = "How stream records become scrape messages: \"lambda\" (dispatcher function on an event source mapping) or \"pipe\" (EventBridge Pipe straight to the queue)."
  type        = string
  default     = "lambda"

  validation {
    condition     = contains(["lambda", "pipe"], var.dispatch_mode)
    error_message = "dispatch_mode must be \"lambda\" or \"pipe\"."
  }
}

variable "tasks_table" {
  description = "The tasks table and its stream."
  type = object({
    name       = string
    arn        = string
    stream_arn = string
  })
}

variable "scrape_queue" {
  description = "The queue that receives one {\"task_id\": ...} message per task that became Pending."
  type = object({
    url = string
    arn = string
  })
}

variable "handler" {
  description = "The dispatcher's Python entry point (outreach.dispatcher.lambda_handler, from modules/outreach-pipeline/functions.json); unused in pipe mode."
  type        = string
}

variable "package_path" {
  description = "Path of the dispatcher's deployment zip (dist/dispatcher.zip); required in lambda mode, unused in pipe mode."
  type        = string
  default     = null

  validation {
    condition     = var.dispatch_mode == "pipe" || var.package_path != null
    error_message = "package_path is required when dispatch_mode is \"lambda\"."
  }
}

variable "stream" {
  description = <<-EOT
    How the stream is read, in either mode. Retries and record age are finite so one bad record
    cannot block its shard until the stream drops it (24 hours); splitting a failed batch does not
    use up retries.
  EOT
  type = object({
    starting_position                  = optional(string, "TRIM_HORIZON")
    batch_size                         = optional(number, 10)
    maximum_batching_window_in_seconds = optional(number, 0)
    parallelization_factor             = optional(number, 1)
    maximum_retry_attempts             = optional(number, 3)
    maximum_record_age_in_seconds      = optional(number, 3600)
  })
  default = {}

  validation {
    condition     = contains(["TRIM_HORIZON", "LATEST"], var.stream.starting_position)
    error_message = "stream.starting_position must be TRIM_HORIZON or LATEST."
  }

  validation {
    condition     = var.stream.batch_size >= 1 && var.stream.batch_size <= (var.dispatch_mode == "pipe" ? 10 : 10000)
    error_message = "stream.batch_size must be 1-10000 for the dispatcher function, and 1-10 for a pipe (an SQS target takes batches of at most 10)."
  }

  validation {
    condition     = var.stream.maximum_batching_window_in_seconds >= 0 && var.stream.maximum_batching_window_in_seconds <= 300
    error_message = "stream.maximum_batching_window_in_seconds must be between 0 and 300."
  }

  validation {
    condition     = var.stream.parallelization_factor >= 1 && var.stream.parallelization_factor <= 10
    error_message = "stream.parallelization_factor must be between 1 and 10."
  }

  validation {
    condition     = var.stream.maximum_retry_attempts >= 0 && var.stream.maximum_retry_attempts <= 10000 && floor(var.stream.maximum_retry_attempts) == var.stream.maximum_retry_attempts
    error_message = "stream.maximum_retry_attempts must be a whole number from 0 to 10000 (-1, unlimited, is refused)."
  }

  validation {
    condition     = var.stream.maximum_record_age_in_seconds >= 60 && var.stream.maximum_record_age_in_seconds <= 604800
    error_message = "stream.maximum_record_age_in_seconds must be between 60 and 604800 (-1, unlimited, is refused)."
  }
}

variable "dispatcher" {
  description = "The dispatcher function (lambda mode): timeout, memory, reserved concurrency and log level."
  type = object({
    timeout_seconds      = optional(number, 60)
    memory_mb            = optional(number, 256)
    reserved_concurrency = optional(number)
    log_level            = optional(string, "INFO")
  })
  default = {}
}

variable "failure_bucket_name" {
  description = "Name of the bucket that receives batches the dispatcher gave up on (lambda mode)."
  type        = string
  default     = null

  validation {
    condition     = var.dispatch_mode == "pipe" || var.failure_bucket_name != null
    error_message = "failure_bucket_name is required when dispatch_mode is \"lambda\"."
  }
}

variable "failure_record_expiration_days" {
  description = "Days failure records are kept in the failure bucket."
  type        = number
  default     = 14
}

variable "pipe_dlq_message_retention_seconds" {
  description = "How long the pipe's DLQ keeps records it could not deliver (pipe mode)."
  type        = number
  default     = 1209600

  validation {
    condition     = var.pipe_dlq_message_retention_seconds >= 60 && var.pipe_dlq_message_retention_seconds <= 1209600
    error_message = "pipe_dlq_message_retention_seconds must be between 60 and 1209600."
  }
}

variable "iterator_age_alarm_threshold_ms" {
  description = "Alarm when the dispatcher's IteratorAge (age of the newest record it read) exceeds this many milliseconds."
  type        = number
  default     = 300000

  validation {
    condition     = var.iterator_age_alarm_threshold_ms >= 1000
    error_message = "iterator_age_alarm_threshold_ms must be at least 1000."
  }
}

variable "force_destroy_buckets" {
  description = "Let `terraform destroy` remove the failure bucket with its objects (local and throwaway environments)."
  type        = bool
  default     = false
}

variable "powertools_metrics_namespace" {
  description = "CloudWatch namespace of the functions' Powertools metrics."
  type        = string
}

variable "log_retention_days" {
  description = "Days CloudWatch keeps the dispatcher's logs."
  type        = number
  default     = 30
}

variable "alarm_actions" {
  description = "ARNs notified by the alarms (the environment's SNS topic)."
  type        = list(string)
}

variable "failure_notification_topic_arn" {
  description = "SNS topic notified of every failure record written to the failure bucket (lambda mode); its policy must let s3.amazonaws.com publish (modules/alarm-topic does)."
  type        = string

  validation {
    condition     = can(regex("^arn:[a-z-]+:sns:", var.failure_notification_topic_arn))
    error_message = "failure_notification_topic_arn must be an SNS topic ARN."
  }
}

variable "pipe_source_settle_seconds" {
  description = "Seconds to wait, once, between creating the pipe's role policy (and a new stream) and creating the pipe (pipe mode), so AWS can see the role's access to the stream (see main.tf). 0 skips the wait, for an emulator without IAM."
  type        = number
  default     = 120
  nullable    = false

  validation {
    condition     = var.pipe_source_settle_seconds >= 0 && var.pipe_source_settle_seconds <= 600 && floor(var.pipe_source_settle_seconds) == var.pipe_source_settle_seconds
    error_message = "pipe_source_settle_seconds must be a whole number from 0 to 600."
  }
}
