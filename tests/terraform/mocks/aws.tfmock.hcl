# Values the mocked AWS provider returns in the modules' `terraform test` runs (plan only; nothing
# reaches AWS). Computed ARNs get well-formed defaults so policies, alarms and mappings that embed
# them can be asserted on; a test that must tell two resources of one type apart overrides them
# per address.

mock_data "aws_caller_identity" {
  defaults = {
    account_id = "111122223333"
    arn        = "arn:aws:iam::111122223333:user/terraform-test"
    user_id    = "AIDATERRAFORMTEST"
  }
}

mock_data "aws_region" {
  defaults = {
    name = "eu-central-1"
  }
}

mock_data "aws_partition" {
  defaults = {
    partition  = "aws"
    dns_suffix = "amazonaws.com"
  }
}

mock_resource "aws_iam_role" {
  defaults = {
    arn = "arn:aws:iam::111122223333:role/mock-role"
  }
}

mock_resource "aws_cloudwatch_log_group" {
  defaults = {
    arn = "arn:aws:logs:eu-central-1:111122223333:log-group:/aws/lambda/mock"
  }
}

mock_resource "aws_lambda_function" {
  defaults = {
    arn        = "arn:aws:lambda:eu-central-1:111122223333:function:mock"
    invoke_arn = "arn:aws:apigateway:eu-central-1:lambda:path/2015-03-31/functions/arn:aws:lambda:eu-central-1:111122223333:function:mock/invocations"
  }
}

mock_resource "aws_sqs_queue" {
  defaults = {
    arn = "arn:aws:sqs:eu-central-1:111122223333:mock-queue"
    url = "https://sqs.eu-central-1.amazonaws.com/111122223333/mock-queue"
  }
}

mock_resource "aws_s3_bucket" {
  defaults = {
    arn = "arn:aws:s3:::mock-bucket"
  }
}

mock_resource "aws_dynamodb_table" {
  defaults = {
    arn        = "arn:aws:dynamodb:eu-central-1:111122223333:table/mock"
    stream_arn = "arn:aws:dynamodb:eu-central-1:111122223333:table/mock/stream/2026-01-01T00:00:00.000"
  }
}

mock_resource "aws_sns_topic" {
  defaults = {
    arn = "arn:aws:sns:eu-central-1:111122223333:mock-topic"
  }
}

mock_resource "aws_kms_key" {
  defaults = {
    arn    = "arn:aws:kms:eu-central-1:111122223333:key/00000000-0000-0000-0000-000000000000"
    key_id = "00000000-0000-0000-0000-000000000000"
  }
}

mock_resource "aws_cloudwatch_metric_alarm" {
  defaults = {
    arn = "arn:aws:cloudwatch:eu-central-1:111122223333:alarm:mock"
  }
}

mock_resource "aws_pipes_pipe" {
  defaults = {
    arn = "arn:aws:pipes:eu-central-1:111122223333:pipe/mock"
  }
}

mock_resource "aws_cloudwatch_dashboard" {
  defaults = {
    dashboard_arn = "arn:aws:cloudwatch::111122223333:dashboard/mock"
  }
}

mock_resource "aws_cloudwatch_event_rule" {
  defaults = {
    arn = "arn:aws:events:eu-central-1:111122223333:rule/mock"
  }
}

mock_resource "aws_lambda_function_url" {
  defaults = {
    function_url = "https://mock0000000000000000000000000000.lambda-url.eu-central-1.on.aws/"
    url_id       = "mock0000000000000000000000000000"
  }
}
