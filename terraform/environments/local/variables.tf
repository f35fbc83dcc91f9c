variable "allowed_account_ids" {
  description = "AWS account ids this root may deploy to; plan and apply refuse any other (null: any account)."
  type        = list(string)
  default     = null
}

variable "endpoint" {
  description = "URL of the embedded AWS (moto server on loopback)."
  type        = string
  default     = "http://127.0.0.1:4566"

  validation {
    condition     = can(regex("^https?://(127\\.0\\.0\\.1|localhost)(:[0-9]+)?$", var.endpoint))
    error_message = "endpoint must be a loopback URL such as http://127.0.0.1:4566: this root never talks to real AWS."
  }
}

variable "environment" {
  description = "Environment name in every resource name; a second name lets two stacks share one emulator."
  type        = string
  default     = "local"
}

variable "region" {
  description = "Region name the emulator answers for."
  type        = string
  default     = "eu-central-1"
}

variable "package_dir" {
  description = "Directory holding the zips from `make package`; null means the repository's dist/."
  type        = string
  default     = null
}

variable "dispatch_mode" {
  description = "\"lambda\" or \"pipe\" between the tasks stream and the scrape queue."
  type        = string
  default     = "lambda"
}

variable "scraper_concurrency" {
  description = "Reserved concurrency of the scraper and maximum concurrency of its queue mapping; the local pollers never run more invocations at once."
  type        = number
  default     = 140
}

variable "log_retention_days" {
  description = "Days the function logs are kept (prod's value)."
  type        = number
  default     = 90
}

variable "alarm_emails" {
  description = "Addresses subscribed to the alarm topic this root creates; none on the emulator, which sends no e-mail."
  type        = list(string)
  default     = []
}

variable "alarm_topic_arn" {
  description = "An existing SNS topic to send every alarm to instead of creating one."
  type        = string
  default     = null

  validation {
    condition     = var.alarm_topic_arn == null || can(regex("^arn:[a-z-]+:sns:", var.alarm_topic_arn))
    error_message = "alarm_topic_arn must be an SNS topic ARN."
  }
}

variable "email_sender_identity" {
  description = "SES identity campaigns send from; the emulator accepts any (.test is reserved for testing)."
  type        = string
  default     = "outreach.test"
}

variable "email_create_sender_identity" {
  description = "Whether this root creates (and on destroy deletes) the SES identity email_sender_identity; false where another root of the same account and region owns it, e.g. dev beside prod (docs/deploying.md). null: modules/email's default, true."
  type        = bool
  default     = null
}

variable "email_max_send_rate" {
  description = "Emails per second the email stage is sized for, at most the account's SES MaxSendRate (aws sesv2 get-account); the email worker reserves ceil of it. null: modules/email's default (14)."
  type        = number
  default     = null
}

variable "email_first_contact" {
  description = "The per-address rule on first contacts across campaigns (modules/email's first_contact: gap_seconds, per_30_days). null (the default, as prod's): the module's 7 days and 2 per 30 days; `make local` and the end-to-end tests give a gap of minutes, which the virtual clock can wait out."
  type = object({
    gap_seconds = optional(number)
    per_30_days = optional(number)
  })
  default = null
}

variable "email_warmup" {
  description = "The sending identity's warm-up ramp ({start_date = \"YYYY-MM-DD\", daily_caps = [...]}), as prod's: null (the default) is modules/email's, an established identity (no ramp)."
  type = object({
    start_date = optional(string)
    daily_caps = optional(list(number))
  })
  default = null
}

variable "results_expiration_days" {
  description = "Days local keeps scrape results (terraform.tfvars: 90; see docs/security.md, Retention); null takes the scrape-pipeline module's default."
  type        = number
  default     = null
}

variable "receiving_region" {
  description = "The Region SES receives replies in (the aws.receiving provider's), as in prod. null: the root's region, which the emulator answers for."
  type        = string
  default     = null
}

variable "inbound_reply_domain" {
  description = "The domain of the reply addresses (reply+<token>@<domain>), as in prod. null (the default, as prod's): no replies are received; `make local` and the end-to-end tests that exercise replies pass one (a .test domain)."
  type        = string
  default     = null
}

variable "inbound_unmatched_forward_to" {
  description = "The mailbox unmatched and unparseable replies are forwarded to; required with inbound_reply_domain."
  type        = string
  default     = null

  validation {
    condition     = var.inbound_reply_domain == null || var.inbound_unmatched_forward_to != null
    error_message = "inbound_unmatched_forward_to is required with inbound_reply_domain: a reply that matches no email must reach someone."
  }
}

variable "inbound_rule_set_name" {
  description = "An existing, active SES receipt rule set to add the replies' rule to; null: the pipeline creates and activates its own."
  type        = string
  default     = null
}
