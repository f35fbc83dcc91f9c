# The pipeline on the embedded AWS (moto server on loopback): the same modules and settings as the
# cloud environments, with fake credentials and every service pointed at var.endpoint.

provider "aws" {
  region     = var.region
  access_key = "test"
  secret_key = "test"

  skip_credentials_validation = true
  skip_requesting_account_id  = true
  skip_metadata_api_check     = true
  skip_region_validation      = true
  s3_use_path_style           = true

  endpoints {
    cloudwatch = var.endpoint
    dynamodb   = var.endpoint
    events     = var.endpoint
    iam        = var.endpoint
    kms        = var.endpoint
    lambda     = var.endpoint
    logs       = var.endpoint
    pipes      = var.endpoint
    s3         = var.endpoint
    scheduler  = var.endpoint
    sesv2      = var.endpoint
    sns        = var.endpoint
    sqs        = var.endpoint
    sts        = var.endpoint
  }

  default_tags {
    tags = {
      Project     = "outreach-pipeline"
      Environment = var.environment
      ManagedBy   = "terraform"
    }
  }
}

locals {
  package_dir = coalesce(var.package_dir, "${path.root}/../../../dist")
}

module "alarm_topic" {
  source = "../../../modules/alarm-topic"

  name                     = "outreach-${var.environment}-alarms"
  key_deletion_window_days = 7
}

module "pipeline" {
  source = "../../../modules/outreach-pipeline"

  environment   = var.environment
  dispatch_mode = var.dispatch_mode
  packages = {
    scraper           = "${local.package_dir}/scraper.zip"
    dispatcher        = "${local.package_dir}/dispatcher.zip"
    scrape_reconciler = "${local.package_dir}/scrape_reconciler.zip"
    email_worker      = "${local.package_dir}/email_worker.zip"
    email_reconciler  = "${local.package_dir}/email_reconciler.zip"
  }
  email              = { sender_identity = var.email_sender_identity }
  alarm_topic_arn    = module.alarm_topic.topic_arn
  log_retention_days = var.log_retention_days

  scraper = {
    reserved_concurrency = var.scraper_concurrency
    # The local web farm listens on loopback, which the scraper refuses everywhere else.
    environment = { SCRAPER_ALLOW_LOOPBACK = "1" }
  }
  scrape_mapping = { maximum_concurrency = var.scraper_concurrency }

  # moto keeps a DLQ's RedriveAllowPolicy but never returns it, so the provider would wait for it
  # until it times out: the one setting that differs from the cloud environments.
  restrict_dlq_sources = false

  # The emulator has no IAM to propagate: the pipe needs no wait before it is created.
  pipe_source_settle_seconds = 0

  # A throwaway emulator: let `terraform destroy` clear it.
  deletion_protection   = false
  force_destroy_buckets = true
}
