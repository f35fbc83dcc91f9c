variable "name" {
  description = "Function name (for example outreach-prod-scrape-reconciler); also names its schedule, DLQ and alarms."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{1,59}$", var.name))
    error_message = "name must be 2-60 characters of a-z, 0-9 and '-', starting with a letter (the DLQ adds \"-dlq\")."
  }
}

variable "description" {
  description = "What the reconciler heals, shown in the Lambda console."
  type        = string
}

variable "handler" {
  description = "Python entry point (for example outreach.reconcilers.scrape.lambda_handler)."
  type        = string
}

variable "package_path" {
  description = "Path of the deployment zip built by `make package`."
  type        = string
}

variable "schedule_expression" {
  description = "How often the reconciler runs: rate(N minutes|hours) or a cron() expression."
  type        = string
  default     = "rate(5 minutes)"
  nullable    = false

  validation {
    condition     = can(regex("^(rate\\(([1-9][0-9]*) (minute|minutes|hour|hours|day|days)\\)|cron\\(.+\\))$", var.schedule_expression))
    error_message = "schedule_expression must be rate(<n> <unit>) or cron(...)."
  }
}

variable "timeout_seconds" {
  description = "Function timeout; a run stops between two tasks before it and the next run continues, so keep it below the schedule's period."
  type        = number
  default     = 240
  nullable    = false
}

variable "memory_mb" {
  description = "Function memory in MB."
  type        = number
  default     = 256
  nullable    = false
}

variable "environment" {
  description = "Environment variables of the function (its thresholds and resource names)."
  type        = map(string)
  default     = {}
}

variable "page_size" {
  description = "Open tasks the reconciler reads per query of the open-tasks index (RECONCILE_PAGE_SIZE)."
  type        = number
  default     = 100
  nullable    = false

  validation {
    condition     = var.page_size >= 1 && floor(var.page_size) == var.page_size
    error_message = "page_size must be a whole number, at least 1."
  }
}

variable "policy_statements" {
  description = "Least-privilege Allow statements for the calls the reconciler's code makes (see modules/lambda-function)."
  type = list(object({
    sid       = string
    actions   = list(string)
    resources = list(string)
    conditions = optional(list(object({
      test     = string
      variable = string
      values   = list(string)
    })), [])
  }))
}

variable "retry" {
  description = <<-EOT
    Retries of a failed run. delivery_retry_attempts: the schedule's retries of a failed hand-over to
    Lambda (0-185); function_retry_attempts: Lambda's retries of a run that raised (0-2);
    maximum_event_age_in_seconds: both give up on an event older than this (60-21600). A later
    scheduled run repeats the work anyway, so old events are not worth keeping.
  EOT
  type = object({
    delivery_retry_attempts      = optional(number, 2)
    function_retry_attempts      = optional(number, 2)
    maximum_event_age_in_seconds = optional(number, 600)
  })
  default  = {}
  nullable = false

  validation {
    condition     = var.retry.delivery_retry_attempts >= 0 && var.retry.delivery_retry_attempts <= 185 && floor(var.retry.delivery_retry_attempts) == var.retry.delivery_retry_attempts
    error_message = "retry.delivery_retry_attempts must be a whole number from 0 to 185."
  }

  validation {
    condition     = var.retry.maximum_event_age_in_seconds >= 60 && var.retry.maximum_event_age_in_seconds <= 21600
    error_message = "retry.maximum_event_age_in_seconds must be between 60 and 21600 (the lower of the schedule's and Lambda's limits)."
  }
}

variable "dlq_message_retention_seconds" {
  description = "How long the DLQ keeps failed runs (60-1209600 s)."
  type        = number
  default     = 1209600
  nullable    = false

  validation {
    condition     = var.dlq_message_retention_seconds >= 60 && var.dlq_message_retention_seconds <= 1209600
    error_message = "dlq_message_retention_seconds must be between 60 and 1209600 (14 days)."
  }
}

variable "powertools" {
  description = "Powertools for AWS Lambda settings: service name, log level and metrics namespace."
  type = object({
    service_name      = string
    metrics_namespace = string
    log_level         = optional(string, "INFO")
  })
}

variable "log_retention_days" {
  description = "Days CloudWatch keeps the function's logs."
  type        = number
  default     = 30
  nullable    = false
}

variable "alarm_actions" {
  description = "ARNs notified by the DLQ and function alarms (the environment's SNS topic)."
  type        = list(string)
}
