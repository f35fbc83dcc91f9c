variable "region" {
  description = "AWS region of the environment."
  type        = string
}

variable "allowed_account_ids" {
  description = "AWS account ids this root may deploy to; plan and apply refuse any other (null: any account)."
  type        = list(string)
  default     = null
}

variable "package_dir" {
  description = "Directory holding the zips from `make package`; null means the repository's dist/."
  type        = string
  default     = null
}

variable "dispatch_mode" {
  description = "\"lambda\" (dispatcher function) or \"pipe\" (EventBridge Pipe) between the tasks stream and the scrape queue."
  type        = string
  default     = "lambda"
}

variable "alarm_emails" {
  description = "Addresses subscribed to the alarm topic this root creates; dev may run without."
  type        = list(string)
  default     = []
}

variable "alarm_topic_arn" {
  description = "An existing SNS topic to send every alarm to instead of creating one (see the prod root for what its policies must allow)."
  type        = string
  default     = null

  validation {
    condition     = var.alarm_topic_arn == null || can(regex("^arn:[a-z-]+:sns:", var.alarm_topic_arn))
    error_message = "alarm_topic_arn must be an SNS topic ARN."
  }
}

variable "scraper_concurrency" {
  description = "Reserved concurrency of the scraper and maximum concurrency of its queue mapping (2-1000)."
  type        = number
}

variable "log_retention_days" {
  description = "Days CloudWatch keeps function logs."
  type        = number
}

variable "results_expiration_days" {
  description = "Days dev keeps scrape results (terraform.tfvars: 30); null takes the scrape-pipeline module's default."
  type        = number
  default     = null
}

variable "email_sender_identity" {
  description = "SES identity (domain or address) campaign emails are sent from; verify it in SES (DNS records or the address's inbox) after the first apply. Set it in an uncommitted *.auto.tfvars."
  type        = string
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
