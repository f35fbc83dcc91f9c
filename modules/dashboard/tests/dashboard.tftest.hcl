mock_provider "aws" {
  source          = "../../tests/terraform/mocks"
  override_during = plan
}

variables {
  name                     = "outreach-test"
  region                   = "eu-central-1"
  scrape_queue_name        = "outreach-test-scrape"
  dlq_names                = ["outreach-test-scrape-dlq"]
  function_names           = ["outreach-test-dispatcher", "outreach-test-scraper"]
  scraper                  = { function_name = "outreach-test-scraper", maximum_concurrency = 140 }
  dispatcher_function_name = "outreach-test-dispatcher"
}

run "charts_queue_depth_age_dlq_iterator_age_errors_throttles_and_concurrency" {
  command = plan

  assert {
    condition = toset(flatten([
      for w in jsondecode(aws_cloudwatch_dashboard.this.dashboard_body).widgets : [
        for m in w.properties.metrics : "${m[0]} ${m[1]} ${m[3]}"
      ]
      ])) == toset([
      "AWS/SQS ApproximateNumberOfMessagesVisible outreach-test-scrape",
      "AWS/SQS ApproximateNumberOfMessagesNotVisible outreach-test-scrape",
      "AWS/SQS ApproximateAgeOfOldestMessage outreach-test-scrape",
      "AWS/SQS ApproximateNumberOfMessagesVisible outreach-test-scrape-dlq",
      "AWS/Lambda IteratorAge outreach-test-dispatcher",
      "AWS/Lambda Errors outreach-test-dispatcher",
      "AWS/Lambda Errors outreach-test-scraper",
      "AWS/Lambda Throttles outreach-test-dispatcher",
      "AWS/Lambda Throttles outreach-test-scraper",
      "AWS/Lambda ConcurrentExecutions outreach-test-dispatcher",
      "AWS/Lambda ConcurrentExecutions outreach-test-scraper",
    ])
    error_message = "The dashboard must chart queue depth and age, DLQ depth, iterator age, errors, throttles and concurrency."
  }

  assert {
    condition = anytrue([
      for w in jsondecode(aws_cloudwatch_dashboard.this.dashboard_body).widgets :
      try(w.properties.annotations.horizontal[0].value == 140, false)
    ])
    error_message = "The concurrency chart shows the mapping's maximum concurrency."
  }

  assert {
    condition     = alltrue([for w in jsondecode(aws_cloudwatch_dashboard.this.dashboard_body).widgets : w.properties.region == "eu-central-1"])
    error_message = "Every widget reads the environment's region."
  }
}

run "pipe_mode_charts_pipe_failures_instead_of_iterator_age" {
  command = plan

  variables {
    dispatcher_function_name = null
    pipe_name                = "outreach-test-dispatch"
    function_names           = ["outreach-test-scraper"]
  }

  assert {
    condition = contains(flatten([
      for w in jsondecode(aws_cloudwatch_dashboard.this.dashboard_body).widgets : [
        for m in w.properties.metrics : "${m[0]} ${m[1]} ${m[3]}"
      ]
    ]), "AWS/EventBridge/Pipes ExecutionFailed outreach-test-dispatch")
    error_message = "In pipe mode the dashboard charts the pipe's failed executions."
  }

  assert {
    condition = !contains(flatten([
      for w in jsondecode(aws_cloudwatch_dashboard.this.dashboard_body).widgets : [for m in w.properties.metrics : m[1]]
    ]), "IteratorAge")
    error_message = "Without a dispatcher function there is no iterator age to chart."
  }
}
