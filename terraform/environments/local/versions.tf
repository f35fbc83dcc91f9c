terraform {
  # 1.10 for the S3 backend's use_lockfile (backend.hcl.example); 1.9 for cross-variable validations.
  required_version = ">= 1.10.0"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = "~> 5.100"
    }
  }

  # No backend block: local state. `make local` and the tests pass -state (or copy the root) so
  # the state of a throwaway emulator never lands in the repository.
}
