# Replies to the campaigns (modules/email-inbound, through the pipeline): SES receives them in its
# own Region, which need not be the pipeline's (SES receives email in some Regions only; the module
# validates receiving_region against the SES guide's list). A second AWS provider, configured as the
# default one, in that Region; the pipeline is given it whether or not replies are on.

locals {
  receiving_region = coalesce(var.receiving_region, var.region)
}

provider "aws" {
  alias  = "receiving"
  region = local.receiving_region
  # As the default provider: the same accounts only.
  allowed_account_ids = var.allowed_account_ids

  default_tags {
    tags = {
      Project     = "outreach-pipeline"
      Environment = "dev"
      ManagedBy   = "terraform"
    }
  }
}
