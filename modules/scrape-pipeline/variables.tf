variable "name_prefix" {
  description = "Prefix of every resource name (for example outreach-prod)."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{1,40}$", var.name_prefix))
    error_message = "name_prefix must be 2-41 characters of a-z, 0-9 and '-', starting with a letter."
  }
}

variable "tasks_table" {
  description = "The tasks table the scraper claims and completes tasks in, and the lease margin of its claims (modules/tasks-table output claim_lease_margin_seconds)."
  type = object({
    name                       = string
    arn                        = string
    claim_lease_margin_seconds = number
  })
}

variable "handler" {
  description = "The scraper's Python entry point (outreach.scraper.lambda_handler, from modules/outreach-pipeline/functions.json)."
  type        = string
}

variable "package_path" {
  description = "Path of the scraper's deployment zip (dist/scraper.zip from `make package`)."
  type        = string
}

variable "results_bucket_name" {
  description = "Name of the bucket the scraper writes results/<job_id>/<task_id>.json to."
  type        = string
}

variable "results_expiration_days" {
  description = "Days a scrape result (e-mails, phones, page text of one site) is kept before S3 expires it; null takes this default. With the bucket's versioning the expired version is kept 30 more days as a previous version."
  type        = number
  default     = 90
  nullable    = false

  validation {
    condition     = var.results_expiration_days >= 1 && floor(var.results_expiration_days) == var.results_expiration_days
    error_message = "results_expiration_days must be a whole number of days, at least 1: scraped contact data is not kept without a bound."
  }
}

variable "force_destroy_buckets" {
  description = "Let `terraform destroy` remove the results bucket with its objects (local and throwaway environments)."
  type        = bool
  default     = false
}

variable "queue" {
  description = <<-EOT
    The scrape queue and its dead-letter queue. The visibility timeout must be at least six times
    the scraper timeout (AWS's guidance for SQS event sources), and the DLQ must keep messages
    longer than the source queue (SQS keeps a message's original enqueue time when it moves).
  EOT
  type = object({
    visibility_timeout_seconds    = optional(number, 5400)
    message_retention_seconds     = optional(number, 345600)
    max_receive_count             = optional(number, 3)
    dlq_message_retention_seconds = optional(number, 1209600)
  })
  default = {}

  validation {
    condition     = var.queue.visibility_timeout_seconds >= 0 && var.queue.visibility_timeout_seconds <= 43200
    error_message = "queue.visibility_timeout_seconds must be between 0 and 43200 (12 hours)."
  }

  validation {
    condition     = var.queue.visibility_timeout_seconds >= 6 * var.scraper.timeout_seconds
    error_message = "queue.visibility_timeout_seconds must be at least 6 x scraper.timeout_seconds."
  }

  validation {
    condition = alltrue([
      for r in [var.queue.message_retention_seconds, var.queue.dlq_message_retention_seconds] : r >= 60 && r <= 1209600
    ])
    error_message = "Queue retention periods must be between 60 and 1209600 seconds (14 days)."
  }

  validation {
    condition     = var.queue.dlq_message_retention_seconds > var.queue.message_retention_seconds
    error_message = "queue.dlq_message_retention_seconds must be longer than queue.message_retention_seconds, or messages expire in the DLQ before anyone sees them."
  }

  validation {
    condition     = var.queue.max_receive_count >= 1 && var.queue.max_receive_count <= 1000 && floor(var.queue.max_receive_count) == var.queue.max_receive_count
    error_message = "queue.max_receive_count must be a whole number from 1 to 1000."
  }

  validation {
    condition = try(sum(concat([0], [
      for n in range(1, max(var.queue.max_receive_count, 1)) :
      var.scraper.retry_schedule_seconds[min(n, length(var.scraper.retry_schedule_seconds)) - 1]
    ])) >= 3600, false)
    error_message = "The receives one message gets (queue.max_receive_count) must span at least 3600 seconds under scraper.retry_schedule_seconds, so a site that is down for an hour is still scraped."
  }
}

variable "restrict_dlq_sources" {
  description = <<-EOT
    Give the DLQ a redrive allow policy that accepts only the scrape queue as its source (every
    environment, the embedded AWS included, keeps it on).
  EOT
  type        = bool
  default     = true
}

variable "scraper" {
  description = <<-EOT
    The scraper function: timeout, memory, reserved concurrency, log level, retry schedule and extra
    environment. retry_schedule_seconds is the visibility after the n-th failed receive (the last
    entry repeats): the first retry must come within 5 minutes, and the receives one message gets
    (queue.max_receive_count) must span at least an hour, so a site that is down for an hour is
    still scraped.
  EOT
  type = object({
    timeout_seconds        = optional(number, 420)
    memory_mb              = optional(number, 1536)
    reserved_concurrency   = optional(number, 140)
    log_level              = optional(string, "INFO")
    retry_schedule_seconds = optional(list(number), [30, 3600])
    environment            = optional(map(string), {})
    # The limits of every fetch (the scraper's SCRAPER_* variables).
    fetch = optional(object({
      user_agent              = optional(string, "outreach-pipeline-scraper/0.1 (+company research; contact via site operator)")
      connect_timeout_seconds = optional(number, 10)
      read_timeout_seconds    = optional(number, 20)
      max_body_bytes          = optional(number, 2097152)
      max_redirects           = optional(number, 5)
      attempts_per_url        = optional(number, 3)
      max_extra_pages         = optional(number, 3)
      max_text_chars          = optional(number, 20000)
      respect_robots_txt      = optional(bool, true)
      connections_per_site    = optional(number, 3)
    }), {})
  })
  default = {}

  validation {
    condition = alltrue([
      for n in [var.scraper.fetch.connect_timeout_seconds, var.scraper.fetch.read_timeout_seconds, var.scraper.fetch.max_body_bytes, var.scraper.fetch.max_redirects, var.scraper.fetch.attempts_per_url, var.scraper.fetch.max_extra_pages, var.scraper.fetch.max_text_chars] : floor(n) == n
      ]) && var.scraper.fetch.connect_timeout_seconds >= 1 && var.scraper.fetch.read_timeout_seconds >= 1 && (
      var.scraper.fetch.max_body_bytes >= 1024 && var.scraper.fetch.max_text_chars >= 100 && var.scraper.fetch.max_extra_pages >= 0
    )
    error_message = "scraper.fetch takes whole numbers: timeouts of at least 1 s, max_body_bytes at least 1024, max_text_chars at least 100, max_extra_pages at least 0."
  }

  validation {
    condition     = var.scraper.fetch.max_redirects >= 0 && var.scraper.fetch.max_redirects <= 5 && var.scraper.fetch.attempts_per_url >= 1 && var.scraper.fetch.attempts_per_url <= 3
    error_message = "scraper.fetch.max_redirects must be 0-5 and scraper.fetch.attempts_per_url 1-3: the scraper's own bounds on the load one site gets."
  }

  validation {
    condition     = floor(var.scraper.fetch.connections_per_site) == var.scraper.fetch.connections_per_site && var.scraper.fetch.connections_per_site >= 1 && var.scraper.fetch.connections_per_site <= 6
    error_message = "scraper.fetch.connections_per_site must be a whole number 1-6: the pages of one site fetched at once (1: one after another), never more connections to one host than a browser opens."
  }

  validation {
    condition     = length(trimspace(var.scraper.fetch.user_agent)) > 0
    error_message = "scraper.fetch.user_agent must not be empty: sites are told who is fetching."
  }

  validation {
    condition     = var.scraper.reserved_concurrency >= 1 && floor(var.scraper.reserved_concurrency) == var.scraper.reserved_concurrency
    error_message = "scraper.reserved_concurrency must be a whole number of at least 1: it bounds the load on the sites and the table."
  }

  validation {
    condition = length(var.scraper.retry_schedule_seconds) >= 1 && alltrue([
      for d in var.scraper.retry_schedule_seconds : d >= 0 && d <= 43200 && floor(d) == d
    ])
    error_message = "scraper.retry_schedule_seconds needs at least one whole number of seconds, each 0-43200 (the SQS visibility limit)."
  }

  validation {
    condition     = try(var.scraper.retry_schedule_seconds[0] <= 300, false)
    error_message = "scraper.retry_schedule_seconds must bring the first retry within 300 seconds."
  }
}

variable "mapping" {
  description = "The SQS event source mapping: batch size, batching window and maximum concurrency."
  type = object({
    batch_size                         = optional(number, 1)
    maximum_batching_window_in_seconds = optional(number, 0)
    maximum_concurrency                = optional(number, 140)
  })
  default = {}

  validation {
    condition     = var.mapping.maximum_concurrency >= 2 && var.mapping.maximum_concurrency <= 1000
    error_message = "mapping.maximum_concurrency must be between 2 and 1000."
  }

  validation {
    condition     = var.mapping.maximum_concurrency <= var.scraper.reserved_concurrency
    error_message = "mapping.maximum_concurrency must not exceed scraper.reserved_concurrency, or the mapping's invocations are throttled."
  }

  validation {
    condition     = var.mapping.maximum_batching_window_in_seconds >= 0 && var.mapping.maximum_batching_window_in_seconds <= 300
    error_message = "mapping.maximum_batching_window_in_seconds must be between 0 and 300."
  }

  validation {
    condition = var.mapping.batch_size >= 1 && (
      var.mapping.maximum_batching_window_in_seconds == 0 ? var.mapping.batch_size <= 10 : var.mapping.batch_size <= 10000
    )
    error_message = "mapping.batch_size must be 1-10 without a batching window, and at most 10000 with one."
  }
}

variable "powertools_metrics_namespace" {
  description = "CloudWatch namespace of the functions' Powertools metrics."
  type        = string
}

variable "log_retention_days" {
  description = "Days CloudWatch keeps the scraper's logs."
  type        = number
  default     = 30
}

variable "alarm_actions" {
  description = "ARNs notified by the DLQ and function alarms (the environment's SNS topic)."
  type        = list(string)
}
