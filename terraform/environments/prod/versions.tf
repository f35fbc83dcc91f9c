terraform {
  # 1.10 for the S3 backend's use_lockfile (backend.hcl.example); 1.9 for cross-variable validations.
  required_version = ">= 1.10.0"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = "~> 5.100"
    }
  }

  # Partial configuration: bucket, key, region and locking come from backend.hcl
  # (copy backend.hcl.example), so no account-specific names are committed.
  backend "s3" {}
}
