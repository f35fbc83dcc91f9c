# One CloudWatch dashboard per environment: is work piling up (queue depth and age), is work being
# lost (DLQ depth, stream dispatch falling behind or failing), and are the functions healthy
# (errors, throttles, concurrency against the configured ceiling).

locals {
  period = 60

  queue_widgets = [
    {
      title = "Scrape queue: waiting and in flight"
      metrics = [
        ["AWS/SQS", "ApproximateNumberOfMessagesVisible", "QueueName", var.scrape_queue_name, { stat = "Maximum", label = "waiting" }],
        ["AWS/SQS", "ApproximateNumberOfMessagesNotVisible", "QueueName", var.scrape_queue_name, { stat = "Maximum", label = "in flight" }],
      ]
      annotations = {}
    },
    {
      title = "Scrape queue: age of oldest message (s)"
      metrics = [
        ["AWS/SQS", "ApproximateAgeOfOldestMessage", "QueueName", var.scrape_queue_name, { stat = "Maximum" }],
      ]
      annotations = {}
    },
    {
      title       = "Dead-letter queues: messages waiting"
      metrics     = [for q in var.dlq_names : ["AWS/SQS", "ApproximateNumberOfMessagesVisible", "QueueName", q, { stat = "Maximum" }]]
      annotations = { horizontal = [{ label = "alarm", value = 1 }] }
    },
  ]

  dispatch_widgets = concat(
    var.dispatcher_function_name == null ? [] : [{
      title       = "Dispatcher: stream iterator age (ms)"
      metrics     = [["AWS/Lambda", "IteratorAge", "FunctionName", var.dispatcher_function_name, { stat = "Maximum" }]]
      annotations = {}
    }],
    var.pipe_name == null ? [] : [{
      title = "Dispatch pipe: failed executions"
      metrics = [
        ["AWS/EventBridge/Pipes", "ExecutionFailed", "PipeName", var.pipe_name, { stat = "Sum" }],
        ["AWS/EventBridge/Pipes", "TargetStageFailed", "PipeName", var.pipe_name, { stat = "Sum" }],
      ]
      annotations = {}
    }],
  )

  function_widgets = [
    {
      title       = "Function errors"
      metrics     = [for f in var.function_names : ["AWS/Lambda", "Errors", "FunctionName", f, { stat = "Sum" }]]
      annotations = {}
    },
    {
      title       = "Function throttles"
      metrics     = [for f in var.function_names : ["AWS/Lambda", "Throttles", "FunctionName", f, { stat = "Sum" }]]
      annotations = {}
    },
    {
      title   = "Concurrent executions"
      metrics = [for f in var.function_names : ["AWS/Lambda", "ConcurrentExecutions", "FunctionName", f, { stat = "Maximum" }]]
      annotations = {
        horizontal = [{ label = "scraper maximum concurrency", value = var.scraper.maximum_concurrency }]
      }
    },
  ]

  widgets = concat(local.queue_widgets, local.dispatch_widgets, local.function_widgets)
}

resource "aws_cloudwatch_dashboard" "this" {
  dashboard_name = var.name
  dashboard_body = jsonencode({
    widgets = [for i, w in local.widgets : {
      type   = "metric"
      x      = (i % 2) * 12
      y      = floor(i / 2) * 6
      width  = 12
      height = 6
      properties = merge(
        {
          title   = w.title
          region  = var.region
          view    = "timeSeries"
          stacked = false
          period  = local.period
          metrics = w.metrics
        },
        { for k, v in { annotations = w.annotations } : k => v if length(v) > 0 },
      )
    }]
  })
}
