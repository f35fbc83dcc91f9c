# Replies to the campaigns (modules/email-inbound, through the pipeline), as in prod: SES receives
# them in their own Region. On the embedded AWS that is the root's Region, on the same endpoints and
# fake credentials as the default provider (its settings, each documented in docs/local-semantics.md).

locals {
  receiving_region = coalesce(var.receiving_region, var.region)
}

provider "aws" {
  alias  = "receiving"
  region = local.receiving_region
  # As the default provider: the same accounts only.
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
