variable "region" {
  description = "AWS region of the environment."
  type        = string
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
  description = "Addresses subscribed to the alarm topic this root creates (each must confirm its subscription)."
  type        = list(string)
  default     = []

  validation {
    condition     = length(var.alarm_emails) > 0 || var.alarm_topic_arn != null
    error_message = "prod needs someone to alarm: set alarm_emails (at least one address) or alarm_topic_arn (an existing topic), e.g. in a prod.auto.tfvars that is not committed."
  }
}

variable "alarm_topic_arn" {
  description = <<-EOT
    An existing SNS topic to send every alarm to instead of creating one (for example the on-call
    paging topic). Its policy must let cloudwatch.amazonaws.com and s3.amazonaws.com of this account
    publish, and its KMS key policy must grant them kms:GenerateDataKey* and kms:Decrypt
    (modules/alarm-topic shows both).
  EOT
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

variable "email_sender_identity" {
  description = "SES identity (domain or address) campaign emails are sent from; verify it in SES (DNS records or the address's inbox) after the first apply. Set it in an uncommitted *.auto.tfvars."
  type        = string
}
