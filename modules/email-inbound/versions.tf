terraform {
  # 1.9 for variable validations that refer to other objects (locals, variables); 1.7 for mock
  # providers in tests.
  required_version = ">= 1.9.0"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.80.0, < 6.0.0"
      # aws: the pipeline's region (the queue, the processor, the forwarder's SES identity);
      # aws.receiving: the region SES receives mail in (the receipt rule, the bucket, the topic).
      configuration_aliases = [aws.receiving]
    }
  }
}
