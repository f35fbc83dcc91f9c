terraform {
  required_version = ">= 1.9.0"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = "~> 5.100"
    }
  }

  # No backend block: local state. `make local` and the tests pass -state (or copy the root) so
  # the state of a throwaway emulator never lands in the repository.
}
