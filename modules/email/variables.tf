variable "name_prefix" {
  description = "Prefix of every resource name (for example outreach-prod)."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{1,30}$", var.name_prefix))
    error_message = "name_prefix must be 2-31 characters of a-z, 0-9 and '-', starting with a letter."
  }
}

variable "tasks_table" {
  description = "The tasks table: name, ARN, the ARN of its open-tasks index, the lease margin of its claims and the shard count of the open-tasks key (modules/tasks-table)."
  type = object({
    name                       = string
    arn                        = string
    open_tasks_index_arn       = string
    claim_lease_margin_seconds = number
    open_index_shards          = number
  })
}

variable "contact_ledger" {
  description = "The contact ledger the worker checks before each send: name, ARN and the dynamodb:LeadingKeys patterns of its address, domain and identity-day records (modules/contact-ledger)."
  type = object({
    name = string
    arn  = string
    key_patterns = object({
      address  = string
      domain   = string
      identity = string
    })
  })
}

variable "handlers" {
  description = "Python entry points of the email worker, the email reconciler and the sending guard (from modules/outreach-pipeline/functions.json)."
  type = object({
    worker        = string
    reconciler    = string
    sending_guard = string
  })
}

variable "packages" {
  description = "Deployment zips from `make package` of the email worker, the email reconciler and the sending guard."
  type = object({
    worker        = string
    reconciler    = string
    sending_guard = string
  })
}

variable "sender_identity" {
  description = "The SES identity campaigns send from: a domain (example.com) or an address; created here unless create_sender_identity is false, and verified through DNS (dkim_records) or the address's inbox."
  type        = string

  validation {
    condition     = can(regex("^([^@\\s]+@)?[a-z0-9.-]+\\.[a-z]{2,}$", lower(var.sender_identity)))
    error_message = "sender_identity must be a domain or an e-mail address."
  }
}

variable "create_sender_identity" {
  description = <<-EOT
    Create the SES identity sender_identity in this module (true), or send with one that already
    exists in the account and region (false): another root owns it (dev beside prod in one account,
    see docs/deploying.md) or an operator created it. With false nothing here creates, changes or
    destroys the identity; the worker's ses:SendEmail statement names it by its ARN, built from the
    name, so it need not exist when this module is applied (only when the first email is sent).
  EOT
  type        = bool
  default     = true
  nullable    = false
}

variable "max_send_rate" {
  description = <<-EOT
    Emails per second the stage is sized for: at most the account's SES maximum sending rate in the
    region (SendQuota.MaxSendRate of `aws sesv2 get-account`); SES throttles sends above it. The
    worker's reserved concurrency is ceil(max_send_rate) unless worker.reserved_concurrency is set.
    The default, 14, is the figure commonly quoted for an account that has just left the sandbox;
    AWS's quota page names none (1 in the sandbox, otherwise "varies"), so set the account's own.
  EOT
  type        = number
  default     = 14
  nullable    = false

  # https://docs.aws.amazon.com/ses/latest/dg/manage-sending-quotas.html (sending rate),
  # https://docs.aws.amazon.com/ses/latest/dg/quotas.html (1 per second in the sandbox; out of it "varies
  # based on your specific use case"). Neither page gives an upper limit: 1000 is this module's bound, the
  # reservation ceil(max_send_rate) must also fit the account's Lambda concurrency (make preflight).
  validation {
    condition     = var.max_send_rate > 0 && var.max_send_rate <= 1000
    error_message = "max_send_rate must be a positive number of emails per second, at most 1000."
  }
}

variable "send_grace_seconds" {
  description = "How late an email may still go out after its send time; later it is Failed as too_late. Also the age limit of the worker's asynchronous events (60-21600 s)."
  type        = number
  default     = 3600
  nullable    = false

  validation {
    condition     = var.send_grace_seconds >= 60 && var.send_grace_seconds <= 21600 && floor(var.send_grace_seconds) == var.send_grace_seconds
    error_message = "send_grace_seconds must be a whole number from 60 to 21600 (Lambda's limit on an asynchronous event's age)."
  }
}

variable "paused_recheck_seconds" {
  description = <<-EOT
    How long an email that SES refused because the configuration set's sending is paused (the
    reputation guard, or `outreach sending pause`) waits before the worker tries it again (default
    900 s, 15 minutes): it is moved to its first allowed minute that far ahead inside its window, and
    Failed as too_late once its next try would be past send_grace_seconds after the time it was due.
    At most send_grace_seconds, so a paused email is tried at least once more inside its grace period.
  EOT
  type        = number
  default     = 900
  nullable    = false

  validation {
    condition     = var.paused_recheck_seconds >= 60 && var.paused_recheck_seconds <= var.send_grace_seconds && floor(var.paused_recheck_seconds) == var.paused_recheck_seconds
    error_message = "paused_recheck_seconds must be a whole number of seconds from 60 to send_grace_seconds."
  }
}

variable "first_contact" {
  description = <<-EOT
    The per-address rule on first contacts (the first step of a campaign) across every campaign, which
    the worker enforces at send time: no two closer than gap_seconds (default 7 days), at most
    per_30_days in any 30 days (default 2). A refused first step is moved to the next allowed minute
    inside its window, never dropped.
  EOT
  type = object({
    gap_seconds = optional(number, 604800)
    per_30_days = optional(number, 2)
  })
  default  = {}
  nullable = false

  validation {
    condition     = var.first_contact.gap_seconds >= 0 && var.first_contact.gap_seconds <= 2592000 && floor(var.first_contact.gap_seconds) == var.first_contact.gap_seconds
    error_message = "first_contact.gap_seconds must be a whole number of seconds from 0 to 2592000 (30 days)."
  }
  validation {
    condition     = var.first_contact.per_30_days >= 1 && var.first_contact.per_30_days <= 100 && floor(var.first_contact.per_30_days) == var.first_contact.per_30_days
    error_message = "first_contact.per_30_days must be a whole number from 1 to 100."
  }
}

variable "warmup" {
  description = <<-EOT
    The sending identity's warm-up ramp, which the worker enforces at send time over every campaign and
    `outreach campaign schedule` plans under: from the UTC date start_date (day 1, YYYY-MM-DD) the
    identity sends at most daily_caps[n - 1] emails on UTC day n, never more than the account's SES
    24-hour quota; after the last entry no ramp applies. start_date = null: an established identity, no
    ramp. The default schedule (28 days, 50 a day doubling every 4 days to 3200) and its sources:
    docs/operator-cli.md, "Warm-up ramp per sending identity".
  EOT
  type = object({
    start_date = optional(string)
    daily_caps = optional(list(number), [50, 50, 50, 50, 100, 100, 100, 100, 200, 200, 200, 200, 400, 400, 400, 400, 800, 800, 800, 800, 1600, 1600, 1600, 1600, 3200, 3200, 3200, 3200])
  })
  default  = {}
  nullable = false

  validation {
    condition     = var.warmup.start_date == null || can(formatdate("YYYY-MM-DD", "${coalesce(var.warmup.start_date, "x")}T00:00:00Z"))
    error_message = "warmup.start_date must be null or a UTC date YYYY-MM-DD."
  }
  validation {
    condition     = length(var.warmup.daily_caps) >= 1 && length(var.warmup.daily_caps) <= 366
    error_message = "warmup.daily_caps must list 1 to 366 days."
  }
  validation {
    condition     = alltrue([for cap in var.warmup.daily_caps : cap >= 1 && cap <= 10000000 && floor(cap) == cap])
    error_message = "warmup.daily_caps must be whole numbers from 1 to 10000000."
  }
  validation {
    condition     = alltrue([for day in range(1, length(var.warmup.daily_caps)) : var.warmup.daily_caps[day] >= var.warmup.daily_caps[day - 1]])
    error_message = "warmup.daily_caps must not decrease from one day to the next."
  }
}

variable "worker" {
  description = "The email worker function; null settings take the defaults (60 s, 256 MB, reserved concurrency ceil(max_send_rate), INFO)."
  type = object({
    timeout_seconds      = optional(number, 60)
    memory_mb            = optional(number, 256)
    reserved_concurrency = optional(number)
    log_level            = optional(string, "INFO")
  })
  default  = {}
  nullable = false
}

variable "reconciler" {
  description = "The email reconciler; see modules/reconciler (every 30 minutes, 600 s timeout by default)."
  type = object({
    schedule_expression = optional(string, "rate(30 minutes)")
    timeout_seconds     = optional(number, 600)
    log_level           = optional(string, "INFO")
  })
  default  = {}
  nullable = false
}

variable "dlq_message_retention_seconds" {
  description = "How long the email DLQ keeps failed deliveries and invocations (60-1209600 s)."
  type        = number
  default     = 1209600
  nullable    = false

  validation {
    condition     = var.dlq_message_retention_seconds >= 60 && var.dlq_message_retention_seconds <= 1209600
    error_message = "dlq_message_retention_seconds must be between 60 and 1209600 (14 days)."
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

variable "reputation_alarm_levels" {
  description = <<-EOT
    The account's SES bounce and complaint rates (fractions: 0.025 is 2.5 %) at which the reputation
    alarms page the alarm topic. The defaults are half of the levels at which SES reviews an account
    (5 % bounces, 0.1 % complaints), so a person acts before SES does.
  EOT
  type = object({
    bounce_rate    = optional(number, 0.025)
    complaint_rate = optional(number, 0.0005)
  })
  default  = {}
  nullable = false

  # https://docs.aws.amazon.com/ses/latest/dg/monitor-sender-reputation.html: an alarm at or above the
  # review level would page only after SES acted.
  validation {
    condition     = var.reputation_alarm_levels.bounce_rate > 0 && var.reputation_alarm_levels.bounce_rate < 0.05
    error_message = "reputation_alarm_levels.bounce_rate must be above 0 and below 0.05, the bounce rate at which SES reviews an account."
  }
  validation {
    condition     = var.reputation_alarm_levels.complaint_rate > 0 && var.reputation_alarm_levels.complaint_rate < 0.001
    error_message = "reputation_alarm_levels.complaint_rate must be above 0 and below 0.001, the complaint rate at which SES reviews an account."
  }
}

variable "reputation_stop_levels" {
  description = <<-EOT
    The account's SES bounce and complaint rates (fractions: 0.04 is 4 %) at which the reputation
    guard pauses the configuration set's sending and pages the alarm topic; `outreach sending resume`
    turns it back on. Each must be above its page level (reputation_alarm_levels: a person is paged
    before sending stops) and below the level at which SES reviews an account (5 % bounces, 0.1 %
    complaints), which is also below Gmail's 0.3 % spam rate. Defaults 4 % and 0.08 %.
  EOT
  type = object({
    bounce_rate    = optional(number, 0.04)
    complaint_rate = optional(number, 0.0008)
  })
  default  = {}
  nullable = false

  # https://docs.aws.amazon.com/ses/latest/dg/monitor-sender-reputation.html (review levels);
  # https://support.google.com/a/answer/81126 (Gmail's sender guidelines: spam rate below 0.3 %).
  validation {
    condition     = var.reputation_stop_levels.bounce_rate > var.reputation_alarm_levels.bounce_rate && var.reputation_stop_levels.bounce_rate < 0.05
    error_message = "reputation_stop_levels.bounce_rate must be above reputation_alarm_levels.bounce_rate and below 0.05, the bounce rate at which SES reviews an account."
  }
  validation {
    condition     = var.reputation_stop_levels.complaint_rate > var.reputation_alarm_levels.complaint_rate && var.reputation_stop_levels.complaint_rate < 0.001
    error_message = "reputation_stop_levels.complaint_rate must be above reputation_alarm_levels.complaint_rate and below 0.001, the complaint rate at which SES reviews an account (below Gmail's 0.3 %)."
  }
}

variable "reputation_guard_enabled" {
  description = <<-EOT
    Whether a stop alarm's ALARM pauses sending (the EventBridge rule to the sending guard is ENABLED)
    or only pages (DISABLED). True by default; false where scenarios deliberately play lists that
    bounce and complain on one account (the local root's end-to-end scenarios), which would otherwise
    pause each other's campaigns.
  EOT
  type        = bool
  default     = true
  nullable    = false
}

variable "reputation_alarm_period_seconds" {
  description = "The period over which the reputation page and stop alarms take the Maximum of the SES rate, and so the longest a crossing waits to be seen (default 900 s; one period is evaluated)."
  type        = number
  default     = 900
  nullable    = false

  # CloudWatch periods of a standard-resolution metric are multiples of 60 s
  # (https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html).
  validation {
    condition     = var.reputation_alarm_period_seconds >= 60 && var.reputation_alarm_period_seconds <= 86400 && var.reputation_alarm_period_seconds % 60 == 0
    error_message = "reputation_alarm_period_seconds must be a multiple of 60 from 60 to 86400."
  }
}

variable "sending_guard" {
  description = "The sending guard function; unset settings take the defaults (30 s, 128 MB, reserved concurrency 1, INFO)."
  type = object({
    timeout_seconds = optional(number, 30)
    memory_mb       = optional(number, 128)
    log_level       = optional(string, "INFO")
  })
  default  = {}
  nullable = false
}
