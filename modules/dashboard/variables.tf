variable "name" {
  description = "Dashboard name."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9_-]{1,255}$", var.name))
    error_message = "Dashboard names are letters, digits, '-' and '_'."
  }
}

variable "region" {
  description = "Region the widgets read metrics from."
  type        = string
}

variable "scrape_queue_name" {
  description = "The scrape queue: depth, in-flight messages and age of the oldest message."
  type        = string
}

variable "dlq_names" {
  description = "Every dead-letter queue of the environment (depth widget)."
  type        = list(string)
}

variable "function_names" {
  description = "Every function of the environment (errors, throttles and concurrency widgets)."
  type        = list(string)
}

variable "scraper" {
  description = "The scraper's name and the mapping's maximum concurrency, drawn as a line on the concurrency widget."
  type = object({
    function_name       = string
    maximum_concurrency = number
  })
}

variable "dispatcher_function_name" {
  description = "The dispatcher function (lambda dispatch mode) whose IteratorAge is charted; null in pipe mode."
  type        = string
  default     = null
}

variable "pipe_name" {
  description = "The dispatch pipe (pipe dispatch mode) whose failures are charted; null in lambda mode."
  type        = string
  default     = null
}
