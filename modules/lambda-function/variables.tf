variable "name" {
  description = "Function name; also names its role, log group and alarms."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9_-]{1,64}$", var.name))
    error_message = "Function names are 1-64 characters of letters, digits, '-' and '_'."
  }
}

variable "description" {
  description = "What the function does, shown in the Lambda console."
  type        = string
  default     = ""
}

variable "handler" {
  description = "Python entry point, module path and function (for example outreach.scraper.lambda_handler)."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)+$", var.handler))
    error_message = "handler must be a dotted path ending in the function name, such as outreach.scraper.lambda_handler."
  }
}

variable "package_path" {
  description = "Path of the deployment zip built by `make package` (dist/<function>.zip)."
  type        = string

  validation {
    condition     = endswith(var.package_path, ".zip") && fileexists(var.package_path)
    error_message = "package_path must name an existing .zip; build the packages with `make package`."
  }
}

variable "memory_mb" {
  description = "Memory in MB (128-10240); CPU scales with it."
  type        = number
  default     = 256

  validation {
    condition     = var.memory_mb >= 128 && var.memory_mb <= 10240 && floor(var.memory_mb) == var.memory_mb
    error_message = "memory_mb must be a whole number from 128 to 10240."
  }
}

variable "timeout_seconds" {
  description = "Function timeout in seconds (1-900)."
  type        = number

  validation {
    condition     = var.timeout_seconds >= 1 && var.timeout_seconds <= 900 && floor(var.timeout_seconds) == var.timeout_seconds
    error_message = "timeout_seconds must be a whole number from 1 to 900."
  }
}

variable "reserved_concurrency" {
  description = "Reserved concurrent executions (0 disables the function); null leaves it in the unreserved pool."
  type        = number
  default     = null

  validation {
    condition     = var.reserved_concurrency == null || try(var.reserved_concurrency >= 0 && floor(var.reserved_concurrency) == var.reserved_concurrency, false)
    error_message = "reserved_concurrency must be a whole number of at least 0, or null."
  }
}

variable "environment" {
  description = "Environment variables besides the Powertools ones this module sets."
  type        = map(string)
  default     = {}

  validation {
    condition = alltrue([
      for key in keys(var.environment) :
      can(regex("^[A-Za-z][A-Za-z0-9_]*$", key)) && !startswith(key, "AWS_") && !startswith(key, "POWERTOOLS_")
    ])
    error_message = "Environment keys are letters, digits and '_'; AWS_* keys are reserved by Lambda and POWERTOOLS_* ones come from var.powertools."
  }
}

variable "powertools" {
  description = "Powertools for AWS Lambda settings: service name, log level and metrics namespace."
  type = object({
    service_name      = string
    metrics_namespace = string
    log_level         = optional(string, "INFO")
  })

  validation {
    condition     = contains(["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"], var.powertools.log_level)
    error_message = "powertools.log_level must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL."
  }
}

variable "policy_statements" {
  description = <<-EOT
    Allow statements of the function's least-privilege policy, each naming the exact actions and
    resources the code uses, and optionally the conditions that narrow them further: each condition
    is an operator (test, e.g. ForAllValues:StringLike), a condition key (variable) and its values,
    as in IAM's Condition element (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition.html).
    The module adds writing to the function's own log group, X-Ray trace segments and, with
    async_invocation, sending to its on-failure destination.
  EOT
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

  validation {
    condition     = alltrue([for s in var.policy_statements : can(regex("^[A-Za-z0-9]+$", s.sid))])
    error_message = "Each statement sid must be alphanumeric."
  }

  validation {
    condition = alltrue(flatten([
      for s in var.policy_statements : [
        for a in s.actions : can(regex("^[a-z0-9-]+:[A-Za-z0-9]+$", a))
      ]
    ]))
    error_message = "Actions must be named exactly as service:Action; wildcards such as \"*\" or \"sqs:*\" are refused."
  }

  validation {
    condition     = alltrue([for s in var.policy_statements : length(s.actions) > 0 && length(s.resources) > 0])
    error_message = "Each statement needs at least one action and one resource."
  }

  validation {
    condition     = alltrue(flatten([for s in var.policy_statements : [for r in s.resources : r != "*"]]))
    error_message = "Statements name their resources; \"*\" is refused."
  }

  validation {
    condition = alltrue([
      for s in var.policy_statements :
      length(s.conditions) == length(distinct([for c in s.conditions : "${c.test} ${lower(c.variable)}"])) &&
      alltrue([for c in s.conditions : can(regex("^((ForAllValues|ForAnyValue):)?[A-Za-z]+$", c.test)) && can(regex("^[a-z0-9-]+:[A-Za-z0-9/_-]+$", c.variable)) && length(c.values) > 0])
    ])
    error_message = "Each condition names an operator (optionally ForAllValues: or ForAnyValue:), a service:key condition key and at least one value, each operator and key at most once per statement."
  }
}

variable "log_retention_days" {
  description = "Days CloudWatch keeps the function's logs."
  type        = number
  default     = 30

  validation {
    condition     = contains([1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653], var.log_retention_days)
    error_message = "log_retention_days must be a retention CloudWatch Logs accepts (1, 3, 5, 7, 14, 30, 60, 90, ... 3653)."
  }
}

variable "alarm_actions" {
  description = "ARNs notified when an alarm changes state (the environment's SNS topic)."
  type        = list(string)
}

variable "alarms" {
  description = "Thresholds for the Errors and Throttles alarms, counted per period."
  type = object({
    errors_threshold    = optional(number, 1)
    throttles_threshold = optional(number, 1)
    period_seconds      = optional(number, 300)
    evaluation_periods  = optional(number, 1)
  })
  default = {}

  validation {
    condition     = var.alarms.errors_threshold >= 1 && var.alarms.throttles_threshold >= 1
    error_message = "Alarm thresholds must be at least 1."
  }

  validation {
    condition     = var.alarms.period_seconds >= 60 && var.alarms.period_seconds % 60 == 0 && var.alarms.evaluation_periods >= 1
    error_message = "period_seconds must be a multiple of 60 and evaluation_periods at least 1."
  }
}

variable "async_invocation" {
  description = <<-EOT
    For functions invoked asynchronously (EventBridge rules, EventBridge Scheduler): how often Lambda
    retries a failed event (0-2), how old an event may get (60-21600 s), and where an event goes
    once both are spent (SQS queue, SNS topic, Lambda function, event bus or S3 bucket ARN).
    Null for functions invoked synchronously or by an event source mapping.
  EOT
  type = object({
    maximum_retry_attempts       = number
    maximum_event_age_in_seconds = number
    on_failure_destination_arn   = string
  })
  default = null

  validation {
    condition     = var.async_invocation == null || try(var.async_invocation.maximum_retry_attempts >= 0 && var.async_invocation.maximum_retry_attempts <= 2 && floor(var.async_invocation.maximum_retry_attempts) == var.async_invocation.maximum_retry_attempts, false)
    error_message = "async_invocation.maximum_retry_attempts must be 0, 1 or 2."
  }

  validation {
    condition     = var.async_invocation == null || try(var.async_invocation.maximum_event_age_in_seconds >= 60 && var.async_invocation.maximum_event_age_in_seconds <= 21600, false)
    error_message = "async_invocation.maximum_event_age_in_seconds must be between 60 and 21600."
  }

  validation {
    condition     = var.async_invocation == null || can(regex("^arn:[a-z-]+:(sqs|sns|lambda|events|s3):", var.async_invocation.on_failure_destination_arn))
    error_message = "async_invocation.on_failure_destination_arn must be an SQS queue, SNS topic, Lambda function, event bus or S3 bucket ARN."
  }
}
