# The pipeline on the embedded AWS (moto server on loopback): the same modules and settings as prod,
# with fake credentials and every service pointed at var.endpoint. Every difference from prod is
# listed, with its reason, in docs/local-semantics.md ("Where the local root differs from prod"), and
# tests/terraform/test_local_matches_prod.py fails on one that is not.

provider "aws" {
  region = var.region
  # As in prod; the embedded AWS answers with its one account id (123456789012).
  allowed_account_ids = var.allowed_account_ids
  access_key          = "test"
  secret_key          = "test"

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
    ses        = var.endpoint
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
  package_dir     = coalesce(var.package_dir, "${path.root}/../../../dist")
  alarm_topic_arn = coalesce(var.alarm_topic_arn, one(module.alarm_topic[*].topic_arn))
}

# The environment's alarm topic, unless an existing one is given.
module "alarm_topic" {
  source = "../../../modules/alarm-topic"
  count  = var.alarm_topic_arn == null ? 1 : 0

  name            = "outreach-${var.environment}-alarms"
  email_endpoints = var.alarm_emails
}

module "pipeline" {
  source = "../../../modules/outreach-pipeline"
  providers = {
    aws           = aws
    aws.receiving = aws.receiving
  }

  environment   = var.environment
  dispatch_mode = var.dispatch_mode
  package_dir   = local.package_dir
  email = {
    sender_identity        = var.email_sender_identity
    create_sender_identity = var.email_create_sender_identity
    max_send_rate          = var.email_max_send_rate
    warmup                 = var.email_warmup
    # null, as prod: modules/email's 7 days and 2 per 30 days. make local and the end-to-end tests
    # give a gap the virtual clock can wait out (docs/local-semantics.md).
    first_contact = var.email_first_contact
    # The local scenarios play lists that bounce and complain on one embedded account (make local's
    # campaign, tests/e2e): a stop alarm pages but does not pause the others' campaigns.
    # tests/e2e/test_reputation_guard.py enables the rule for its own scenario.
    reputation_guard_enabled = false
  }
  # Replies are received once the root names its reply domain (receiving.tf); null: none.
  inbound = var.inbound_reply_domain == null ? null : {
    receiving_region     = local.receiving_region
    reply_domain         = var.inbound_reply_domain
    unmatched_forward_to = var.inbound_unmatched_forward_to
    rule_set_name        = var.inbound_rule_set_name
  }
  alarm_topic_arn    = local.alarm_topic_arn
  log_retention_days = var.log_retention_days

  # Scraped contact data expires (terraform.tfvars; docs/security.md, Retention).
  results_expiration_days = var.results_expiration_days

  scraper = {
    reserved_concurrency = var.scraper_concurrency
    # The local web farm listens on loopback, which the scraper refuses everywhere else.
    environment = { SCRAPER_ALLOW_LOOPBACK = "1" }
  }
  scrape_mapping = { maximum_concurrency = var.scraper_concurrency }

  # The emulator has no IAM to propagate: the pipe needs no wait before it is created.
  pipe_source_settle_seconds = 0
}
