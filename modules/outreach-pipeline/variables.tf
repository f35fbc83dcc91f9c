variable "environment" {
  description = "Environment name (dev, prod, local, ...); part of every resource name."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{1,11}$", var.environment))
    error_message = "environment must be 2-12 characters of a-z, 0-9 and '-', starting with a letter (bucket names must stay under 63 characters)."
  }
}

variable "package_dir" {
  description = "Directory of the zips from `make package`: <package_dir>/<name>.zip for each function of functions.json (dispatcher.zip only in lambda dispatch mode)."
  type        = string
}

variable "dispatch_mode" {
  description = "\"lambda\" (dispatcher function on a stream event source mapping) or \"pipe\" (EventBridge Pipe from the stream to the queue)."
  type        = string
  default     = "lambda"
}

variable "alarm_topic_arn" {
  description = "SNS topic every alarm notifies (on ALARM and on OK)."
  type        = string

  validation {
    condition     = can(regex("^arn:[a-z-]+:sns:", var.alarm_topic_arn))
    error_message = "alarm_topic_arn must be an SNS topic ARN."
  }
}

variable "scrape_queue" {
  description = "Scrape queue settings; an attribute left out (null) takes the default of modules/scrape-pipeline, which also validates it."
  type = object({
    visibility_timeout_seconds    = optional(number)
    message_retention_seconds     = optional(number)
    max_receive_count             = optional(number)
    dlq_message_retention_seconds = optional(number)
  })
  default = {}
}

variable "restrict_dlq_sources" {
  description = "Let the scrape DLQ accept messages only from the scrape queue (see modules/scrape-pipeline)."
  type        = bool
  default     = true
}

variable "scraper" {
  description = "Scraper function settings; an attribute left out (null) takes the default of modules/scrape-pipeline, which also validates it."
  type = object({
    timeout_seconds        = optional(number)
    memory_mb              = optional(number)
    reserved_concurrency   = optional(number)
    log_level              = optional(string)
    retry_schedule_seconds = optional(list(number))
    environment            = optional(map(string))
    fetch = optional(object({
      user_agent              = optional(string)
      connect_timeout_seconds = optional(number)
      read_timeout_seconds    = optional(number)
      max_body_bytes          = optional(number)
      max_redirects           = optional(number)
      attempts_per_url        = optional(number)
      max_extra_pages         = optional(number)
      max_text_chars          = optional(number)
      respect_robots_txt      = optional(bool)
      connections_per_site    = optional(number)
    }))
  })
  default = {}
}

variable "scrape_mapping" {
  description = "Queue-to-scraper mapping settings; an attribute left out (null) takes the default of modules/scrape-pipeline, which also validates it."
  type = object({
    batch_size                         = optional(number)
    maximum_batching_window_in_seconds = optional(number)
    maximum_concurrency                = optional(number)
  })
  default = {}
}

variable "stream" {
  description = "How the tasks stream is read in either dispatch mode; an attribute left out (null) takes the default of modules/stream-dispatch, which also validates it."
  type = object({
    starting_position                  = optional(string)
    batch_size                         = optional(number)
    maximum_batching_window_in_seconds = optional(number)
    parallelization_factor             = optional(number)
    maximum_retry_attempts             = optional(number)
    maximum_record_age_in_seconds      = optional(number)
  })
  default = {}
}

variable "dispatcher" {
  description = "Dispatcher function settings (lambda dispatch mode); an attribute left out (null) takes the default of modules/stream-dispatch."
  type = object({
    timeout_seconds      = optional(number)
    memory_mb            = optional(number)
    reserved_concurrency = optional(number)
    log_level            = optional(string)
  })
  default = {}
}

variable "log_retention_days" {
  description = "Days CloudWatch keeps every function's logs."
  type        = number
  default     = 30
}

variable "results_expiration_days" {
  description = "Days after which scrape results expire; null takes scrape-pipeline's default (it owns the results bucket and validates the value)."
  type        = number
  default     = null
}

variable "open_index_shards" {
  description = "Shards the open-tasks index key is written over; null takes tasks-table's default (it owns the table, derives the default from the expected creation rate and validates the value)."
  type        = number
  default     = null
}

variable "failure_record_expiration_days" {
  description = "Days the stream mapping's failure records are kept."
  type        = number
  default     = 14
}

variable "deletion_protection" {
  description = "Protect the tasks table from deletion."
  type        = bool
  default     = true
}

variable "force_destroy_buckets" {
  description = "Let `terraform destroy` delete buckets that still hold objects (local and throwaway environments only)."
  type        = bool
  default     = false
}

variable "scrape_reconciler" {
  description = <<-EOT
    The scrape reconciler; see modules/reconciler (null settings take its defaults: every 5 minutes,
    240 s timeout). message_lifetimes bounds a task's attempts at that many times the scrape queue's
    max_receive_count: after the first message is used up the task is re-queued, after the last it
    is Failed as abandoned.
  EOT
  type = object({
    schedule_expression = optional(string)
    timeout_seconds     = optional(number)
    log_level           = optional(string)
    message_lifetimes   = optional(number, 2)
  })
  default = {}

  validation {
    condition     = var.scrape_reconciler.message_lifetimes >= 1 && var.scrape_reconciler.message_lifetimes <= 5 && floor(var.scrape_reconciler.message_lifetimes) == var.scrape_reconciler.message_lifetimes
    error_message = "scrape_reconciler.message_lifetimes must be a whole number from 1 to 5."
  }
}

variable "pipe_source_settle_seconds" {
  description = "Pipe mode: the one-time wait before the pipe is created; null takes modules/stream-dispatch's default (0 only on an emulator without IAM)."
  type        = number
  default     = null
}

variable "email" {
  description = "Timed campaign email (see modules/email): the SES identity campaigns send from, and optional settings that take modules/email's defaults when left out (null): create_sender_identity (true: create it; false: it exists, another root owns it), max_send_rate (emails per second, 14), send_grace_seconds, first_contact (the per-address gap and 30-day cap on first contacts), warmup (the sending identity's warm-up ramp: start_date, null for an established identity, and daily_caps), paused_recheck_seconds (how often an email held by a paused sending is tried again), reputation_alarm_levels (page), reputation_stop_levels (the sending guard pauses), reputation_alarm_period_seconds, reputation_guard_enabled (false: the stop alarms only page), sending_guard, worker, reconciler."
  type = object({
    sender_identity        = string
    create_sender_identity = optional(bool)
    max_send_rate          = optional(number)
    send_grace_seconds     = optional(number)
    first_contact = optional(object({
      gap_seconds = optional(number)
      per_30_days = optional(number)
    }), {})
    warmup = optional(object({
      start_date = optional(string)
      daily_caps = optional(list(number))
    }), {})
    paused_recheck_seconds = optional(number)
    reputation_alarm_levels = optional(object({
      bounce_rate    = optional(number)
      complaint_rate = optional(number)
    }), {})
    reputation_stop_levels = optional(object({
      bounce_rate    = optional(number)
      complaint_rate = optional(number)
    }), {})
    reputation_alarm_period_seconds = optional(number)
    reputation_guard_enabled        = optional(bool)
    sending_guard = optional(object({
      timeout_seconds = optional(number)
      memory_mb       = optional(number)
      log_level       = optional(string)
    }), {})
    worker = optional(object({
      timeout_seconds      = optional(number)
      memory_mb            = optional(number)
      reserved_concurrency = optional(number)
      log_level            = optional(string)
    }), {})
    reconciler = optional(object({
      schedule_expression = optional(string)
      timeout_seconds     = optional(number)
      log_level           = optional(string)
    }), {})
  })
}

variable "email_feedback" {
  description = <<-EOT
    SES events and one-click unsubscribe (see modules/email-feedback); every setting left out (null)
    takes that module's default, which it also validates: soft_bounce_limit (3 soft bounces of
    distinct messages stop an address), queue, consumer, mapping, unsubscribe,
    unsubscribe_key_deletion_window_days.
  EOT
  type = object({
    soft_bounce_limit = optional(number)
    queue = optional(object({
      visibility_timeout_seconds    = optional(number)
      message_retention_seconds     = optional(number)
      max_receive_count             = optional(number)
      dlq_message_retention_seconds = optional(number)
    }), {})
    consumer = optional(object({
      timeout_seconds      = optional(number)
      memory_mb            = optional(number)
      reserved_concurrency = optional(number)
      log_level            = optional(string)
    }), {})
    mapping = optional(object({
      batch_size                         = optional(number)
      maximum_batching_window_in_seconds = optional(number)
      maximum_concurrency                = optional(number)
    }), {})
    unsubscribe = optional(object({
      timeout_seconds      = optional(number)
      memory_mb            = optional(number)
      reserved_concurrency = optional(number)
      log_level            = optional(string)
    }), {})
    unsubscribe_key_deletion_window_days = optional(number)
  })
  default  = {}
  nullable = false
}

variable "inbound" {
  description = <<-EOT
    Replies to campaign mail (see modules/email-inbound); null: no inbound resources. The Region SES
    receives in (receiving_region, the aws.receiving provider's), the reply domain and the mailbox
    unmatched mail goes to are required; every other setting left out (null) takes that module's
    default, which it also validates: unsubscribe_local_part, forward_from_local_part,
    away_default_days, max_message_bytes, retention_days, rule_set_name (null: the module's own,
    active), create_identity, topic_key_deletion_window_days, queue, processor, mapping.
  EOT
  type = object({
    receiving_region               = string
    reply_domain                   = string
    unmatched_forward_to           = string
    unsubscribe_local_part         = optional(string)
    forward_from_local_part        = optional(string)
    away_default_days              = optional(number)
    max_message_bytes              = optional(number)
    retention_days                 = optional(number)
    rule_set_name                  = optional(string)
    create_identity                = optional(bool)
    topic_key_deletion_window_days = optional(number)
    queue = optional(object({
      visibility_timeout_seconds    = optional(number)
      message_retention_seconds     = optional(number)
      max_receive_count             = optional(number)
      dlq_message_retention_seconds = optional(number)
    }), {})
    processor = optional(object({
      timeout_seconds      = optional(number)
      memory_mb            = optional(number)
      reserved_concurrency = optional(number)
      log_level            = optional(string)
    }), {})
    mapping = optional(object({
      batch_size                         = optional(number)
      maximum_batching_window_in_seconds = optional(number)
      maximum_concurrency                = optional(number)
    }), {})
  })
  default = null
}
