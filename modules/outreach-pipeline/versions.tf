terraform {
  # 1.9 for variable validations that refer to other variables; 1.7 for mock providers in tests.
  required_version = ">= 1.9.0"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.80.0, < 6.0.0"
      # aws.receiving: the Region SES receives replies in (modules/email-inbound); the roots pass it
      # whether or not inbound is set (the Region of their default provider where it is not used).
      configuration_aliases = [aws.receiving]
    }
  }
}
