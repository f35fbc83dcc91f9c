# A dead-letter queue and the alarm that fires on its first message. Whatever names the queue as its
# DLQ (a queue's redrive policy, an event invoke config's on-failure destination, a schedule's or a
# pipe's dead-letter config) only parks what it gave up on; the alarm is what tells someone.
#
# The queue is encrypted with SQS managed keys (SSE-SQS): every sender here is an AWS service or a
# function of this account, none needs a key policy of its own. With redrive sources, its redrive
# allow policy accepts messages redriven from those queues only.
# https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html
# https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SetQueueAttributes.html (RedriveAllowPolicy)

resource "aws_sqs_queue" "this" {
  name                      = var.name
  message_retention_seconds = var.message_retention_seconds
  sqs_managed_sse_enabled   = true

  redrive_allow_policy = length(var.redrive_source_queue_arns) > 0 ? jsonencode({
    redrivePermission = "byQueue"
    sourceQueueArns   = var.redrive_source_queue_arns
  }) : null
}

# ApproximateNumberOfMessagesVisible >= 1 over one minute: the first message alarms, and the alarm
# clears (OK) once the queue is drained. No data (a queue that never held a message) is not a breach.
resource "aws_cloudwatch_metric_alarm" "this" {
  alarm_name          = "${var.name}-not-empty"
  alarm_description   = var.alarm_description
  namespace           = "AWS/SQS"
  metric_name         = "ApproximateNumberOfMessagesVisible"
  dimensions          = { QueueName = aws_sqs_queue.this.name }
  statistic           = "Maximum"
  period              = 60
  evaluation_periods  = 1
  threshold           = 1
  comparison_operator = "GreaterThanOrEqualToThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.alarm_actions
  ok_actions          = var.alarm_actions
}
