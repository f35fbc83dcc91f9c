# Timed outreach email: one EventBridge Scheduler one-time schedule per email task invokes the worker,
# which sends through SES at most once; every failed delivery or invocation lands in the email DLQ,
# and the email reconciler settles what no retry reaches.
#
#   schedule (group) --deliver, 2 retries--> worker --error--> Lambda async retries (2) --> email DLQ (alarm)
#          `--delivery failed after its retries------------------------------------------> email DLQ
#   worker --reads the contact ledger, then SendEmail (configuration set)--> SES
#   SES --every event type--> EventBridge default bus --> modules/email-feedback
#   schedule (rate 30 minutes) --> email reconciler --> recreates schedules, fails stuck tasks
#
# The schedules themselves are created at run time (`outreach campaign schedule`, the reconciler) with
# this module's group, worker, role and DLQ (outputs). Scheduler invokes Lambda asynchronously: its
# retry policy and DLQ cover a failed hand-over, the worker's event invoke config a function error.
# https://docs.aws.amazon.com/scheduler/latest/UserGuide/managing-schedule-dlq.html
# https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-retain-records.html

data "aws_caller_identity" "current" {}
data "aws_region" "current" {}
data "aws_partition" "current" {}

locals {
  account_id = data.aws_caller_identity.current.account_id
  region     = data.aws_region.current.name
  partition  = data.aws_partition.current.partition

  schedule_group_name = "${var.name_prefix}-email"
  dlq_name            = "${var.name_prefix}-email-dlq"
  worker_name         = "${var.name_prefix}-email-worker"
  worker_arn          = "arn:${local.partition}:lambda:${local.region}:${local.account_id}:function:${local.worker_name}"

  # Built from the name, so the worker may send with an identity this module does not create
  # (create_sender_identity = false): the root that owns it need not be applied first.
  identity_arn          = "arn:${local.partition}:ses:${local.region}:${local.account_id}:identity/${var.sender_identity}"
  configuration_set_arn = "arn:${local.partition}:ses:${local.region}:${local.account_id}:configuration-set/${aws_sesv2_configuration_set.this.configuration_set_name}"
  schedules_arn         = "arn:${local.partition}:scheduler:${local.region}:${local.account_id}:schedule/${aws_scheduler_schedule_group.this.name}/*"
  # The group's ARN in the form of the resource type schedule-group (known at plan, unlike the
  # resource's computed arn; tests/iam compares it with the ARN AWS gives the group).
  # https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazoneventbridgescheduler.html
  schedule_group_arn = "arn:${local.partition}:scheduler:${local.region}:${local.account_id}:schedule-group/${aws_scheduler_schedule_group.this.name}"

  # The From addresses the identity covers, as ses:FromAddress values (matched case-sensitively, so
  # written in lower case): an address identity that address only, a domain identity every address
  # of the domain and of its subdomains (https://docs.aws.amazon.com/ses/latest/dg/creating-identities.html,
  # https://docs.aws.amazon.com/ses/latest/dg/sending-authorization-policy-examples.html).
  sender_is_address = strcontains(var.sender_identity, "@")
  sender_addresses  = local.sender_is_address ? [lower(var.sender_identity)] : ["*@${lower(var.sender_identity)}", "*@*.${lower(var.sender_identity)}"]

  # Each item a worker or reconciler request names, by its partition key (dynamodb:LeadingKeys): email
  # tasks email#<campaign>#<hash> and the campaign's counter shards job#<campaign>#<0-9> (campaign ids
  # are job ids, which have no '#', so job#*#? is never a job's own row job#<job>). ForAllValues holds
  # for a request without the key too, so Null = false refuses such a request
  # (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html,
  # https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-single-vs-multi-valued-context-keys.html).
  email_task_keys = [
    { test = "ForAllValues:StringLike", variable = "dynamodb:LeadingKeys", values = ["email#*"] },
    { test = "Null", variable = "dynamodb:LeadingKeys", values = ["false"] },
  ]
  email_task_and_counter_keys = [
    { test = "ForAllValues:StringLike", variable = "dynamodb:LeadingKeys", values = ["email#*", "job#*#?"] },
    { test = "Null", variable = "dynamodb:LeadingKeys", values = ["false"] },
  ]

  # The SES event types the configuration set publishes (MatchingEventTypes,
  # https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_EventDestination.html): every type the
  # SES event consumer records. A soft bounce arrives as BOUNCE (bounceType Transient) once SES has
  # given up retrying, a retry still in progress as DELIVERY_DELAY.
  published_event_types = ["SEND", "REJECT", "BOUNCE", "COMPLAINT", "DELIVERY", "DELIVERY_DELAY", "RENDERING_FAILURE"]

  # A claim lives for the worker's remaining time plus this margin (modules/tasks-table).
  claim_lease_margin_seconds = var.tasks_table.claim_lease_margin_seconds
  # A Running task unchanged this long has lost its worker: its lease ended a minute ago.
  running_after_seconds = var.worker.timeout_seconds + local.claim_lease_margin_seconds + 60
  # A Pending task unchanged this long should have its schedule (created right after the task) and has
  # outlived the worker's async retries after a released claim (about 1 and 2 minutes apart).
  pending_after_seconds = 600
  # A Pending task due further ahead than this is not checked yet: two runs of the reconciler's
  # default rate (30 minutes), so each due email is checked at least once before it is due.
  schedule_horizon_seconds = 3600

  # The worker's reserved concurrency, unless worker.reserved_concurrency sets one: ceil(max_send_rate).
  # One invocation sends at most one email and makes at least four AWS calls one after the other
  # (GetItem, the claim transaction, GetSuppressedDestination, SendEmail, the finish transaction), so
  # it lasts roughly a second or more, and N invocations at once start about N per second at most.
  # That duration is an estimate, not a measurement (warm invocations with fast calls can be shorter),
  # so the reservation caps bursts near max_send_rate when many schedules fire together; the campaign's
  # max_per_minute paces the sends. An invocation beyond it is throttled, and Lambda retries a throttled
  # asynchronous event until it is older than send_grace_seconds (maximum_event_age_in_seconds).
  # https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html
  worker_reserved_concurrency = var.worker.reserved_concurrency != null ? var.worker.reserved_concurrency : ceil(var.max_send_rate)

  # The Easy DKIM records: <token>._domainkey.<domain> CNAME <token>.dkim.amazonses.com, one per token
  # (https://docs.aws.amazon.com/ses/latest/dg/send-email-authentication-dkim-easy.html; the record
  # format: https://docs.aws.amazon.com/ses/latest/APIReference/API_VerifyDomainDkim.html). An address
  # identity's tokens belong to its domain.
  sender_domain = lower(regex("[^@]+$", var.sender_identity))
}

# ---- SES: the sender identity and the configuration set every campaign email is sent with ----------

resource "aws_sesv2_configuration_set" "this" {
  configuration_set_name = "${var.name_prefix}-email"

  delivery_options {
    tls_policy = "REQUIRE"
  }

  reputation_options {
    reputation_metrics_enabled = true
  }

  sending_options {
    sending_enabled = true
  }

  # Addresses that hard-bounce or complain go on the suppression list; the worker checks it before
  # each send, so a follow-up to such an address is cancelled instead of sent.
  # https://docs.aws.amazon.com/ses/latest/dg/sending-email-suppression-list.html
  suppression_options {
    suppressed_reasons = ["BOUNCE", "COMPLAINT"]
  }
}

# Every event type SES publishes for a sent email goes to the account's default event bus, where
# modules/email-feedback's rule takes this configuration set's events (by the ses:configuration-set
# tag SES adds to each) to the SES event consumer: each event is marked on its task, a hard bounce or
# a complaint stops the address, soft bounces are counted towards a stop. Open and click tracking are
# not enabled, so those types are not asked for. EventBridge rather than SNS: the bus encrypts events at rest with no
# key to manage, while an encrypted SNS topic would need a customer managed KMS key whose policy
# admits SES. (EventBridge destinations take only the default bus.)
# https://docs.aws.amazon.com/ses/latest/dg/monitoring-eventbridge.html
# https://docs.aws.amazon.com/ses/latest/dg/event-publishing-retrieving-sns-contents.html (the mail.tags)
resource "aws_sesv2_configuration_set_event_destination" "events" {
  configuration_set_name = aws_sesv2_configuration_set.this.configuration_set_name
  # The name it was first created with: the name cannot change in place, and replacing the
  # destination would drop the events published between its delete and its create.
  event_destination_name = "bounces-and-complaints"

  event_destination {
    enabled              = true
    matching_event_types = local.published_event_types

    event_bridge_destination {
      event_bus_arn = "arn:${local.partition}:events:${local.region}:${local.account_id}:event-bus/default"
    }
  }
}

# Environments applied when the destination published bounces and complaints only keep it (updated
# in place to every type).
moved {
  from = aws_sesv2_configuration_set_event_destination.bounces_and_complaints
  to   = aws_sesv2_configuration_set_event_destination.events
}

# Created only where this module owns the identity: with create_sender_identity = false another root
# of the account (or an operator) has created it, and this stage only sends with it. Its default
# configuration set is the owner's; the worker names its own in every SendEmail.
resource "aws_sesv2_email_identity" "sender" {
  count = var.create_sender_identity ? 1 : 0

  email_identity         = var.sender_identity
  configuration_set_name = aws_sesv2_configuration_set.this.configuration_set_name
}

# ---- the account's sending reputation: a person is paged before SES reviews or pauses the account ----
# SES publishes Reputation.BounceRate and Reputation.ComplaintRate (AWS/SES, fractions from 0 to 1) for
# the account: https://docs.aws.amazon.com/ses/latest/dg/reputationdashboard-cloudwatch-alarm.html
# It reviews an account around 5 % bounces or 0.1 % complaints and may pause it around 10 % / 0.5 %
# (https://docs.aws.amazon.com/ses/latest/dg/monitor-sender-reputation.html); Gmail asks senders to
# stay under 0.3 % complaints. No bounce or complaint yet publishes no data point: not breaching.

resource "aws_cloudwatch_metric_alarm" "reputation" {
  for_each = {
    bounce    = { metric = "Reputation.BounceRate", level = var.reputation_alarm_levels.bounce_rate }
    complaint = { metric = "Reputation.ComplaintRate", level = var.reputation_alarm_levels.complaint_rate }
  }

  alarm_name          = "${var.name_prefix}-email-${each.key}-rate"
  alarm_description   = "The account's SES ${each.key} rate reached ${each.value.level * 100} %, below the level at which SES reviews the account: find the campaign (outreach campaign status) and stop it before SES does."
  namespace           = "AWS/SES"
  metric_name         = each.value.metric
  statistic           = "Maximum"
  period              = var.reputation_alarm_period_seconds
  evaluation_periods  = 1
  comparison_operator = "GreaterThanOrEqualToThreshold"
  threshold           = each.value.level
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.alarm_actions
  ok_actions          = var.alarm_actions
}

# ---- the reputation guard: at the stop level sending pauses, and a person is paged -----------------
#
#   stop alarm --ALARM--> alarm topic (pages a person)
#              `--"CloudWatch Alarm State Change" on the default bus--> rule (these alarms, ALARM)
#                 --target, retries--> sending guard --> PutConfigurationSetSendingOptions(false)
#   target: delivery given up --> guard DLQ (alarm); guard: error after Lambda's 2 retries --> guard DLQ
#
# Only the stop alarms pause: the page alarms above ask a person to look before anything stops.
# CloudWatch puts every alarm's state change on the default bus
# (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch-and-eventbridge.html).
# `outreach sending resume` turns sending back on; the worker defers what is due meanwhile
# (functions/outreach/sending_pause.py).

locals {
  guard_name     = "${var.name_prefix}-sending-guard"
  guard_dlq_name = "${var.name_prefix}-sending-guard-dlq"
  stop_alarms = {
    bounce    = { name = "${var.name_prefix}-email-bounce-rate-stop", metric = "Reputation.BounceRate", level = var.reputation_stop_levels.bounce_rate }
    complaint = { name = "${var.name_prefix}-email-complaint-rate-stop", metric = "Reputation.ComplaintRate", level = var.reputation_stop_levels.complaint_rate }
  }
  # The stop alarms' changes to ALARM, and nothing else of the bus.
  # https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns.html
  stop_alarm_pattern = {
    source        = ["aws.cloudwatch"]
    "detail-type" = ["CloudWatch Alarm State Change"]
    detail = {
      alarmName = [for alarm in local.stop_alarms : alarm.name]
      state     = { value = ["ALARM"] }
    }
  }
}

resource "aws_cloudwatch_metric_alarm" "reputation_stop" {
  for_each = local.stop_alarms

  alarm_name          = each.value.name
  alarm_description   = "The account's SES ${each.key} rate reached ${each.value.level * 100} %, the stop level: the sending guard paused ${aws_sesv2_configuration_set.this.configuration_set_name}. Find the campaign (outreach campaign status), fix the list, then `outreach sending resume`."
  namespace           = "AWS/SES"
  metric_name         = each.value.metric
  statistic           = "Maximum"
  period              = var.reputation_alarm_period_seconds
  evaluation_periods  = 1
  comparison_operator = "GreaterThanOrEqualToThreshold"
  threshold           = each.value.level
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.alarm_actions
  ok_actions          = var.alarm_actions
}

resource "aws_cloudwatch_event_rule" "reputation_stop" {
  name           = "${var.name_prefix}-reputation-stop"
  description    = "The reputation stop alarms going to ALARM, to the sending guard."
  event_bus_name = "default"
  event_pattern  = jsonencode(local.stop_alarm_pattern)
  state          = var.reputation_guard_enabled ? "ENABLED" : "DISABLED"
}

resource "aws_cloudwatch_event_target" "sending_guard" {
  rule           = aws_cloudwatch_event_rule.reputation_stop.name
  event_bus_name = aws_cloudwatch_event_rule.reputation_stop.event_bus_name
  target_id      = "sending-guard"
  arn            = module.sending_guard.function_arn

  # A delivery to the guard (a permission or throttling problem) is retried for up to an hour: a pause
  # that late is still worth making; then the event waits in the guard DLQ, alarmed.
  # https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-retry-policy.html
  # https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html
  retry_policy {
    maximum_event_age_in_seconds = 3600
    maximum_retry_attempts       = 185
  }

  dead_letter_config {
    arn = module.guard_dlq.arn
  }

  depends_on = [aws_lambda_permission.sending_guard]
}

# EventBridge invokes the guard with its service principal, for this rule only.
# https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-use-resource-based.html#eb-lambda-permissions
resource "aws_lambda_permission" "sending_guard" {
  statement_id  = "ReputationStopRuleInvokesGuard"
  action        = "lambda:InvokeFunction"
  function_name = module.sending_guard.function_name
  principal     = "events.amazonaws.com"
  source_arn    = aws_cloudwatch_event_rule.reputation_stop.arn
}

module "guard_dlq" {
  source = "../dead-letter-queue"

  name                      = local.guard_dlq_name
  message_retention_seconds = var.dlq_message_retention_seconds
  alarm_description         = "A reputation stop alarm's event did not pause sending: EventBridge could not deliver it to the sending guard, or the guard failed it after its retries (unreadable event, SES refused the pause); it waits in ${local.guard_dlq_name}. Pause by hand: outreach sending pause."
  alarm_actions             = var.alarm_actions
}

# EventBridge writes an event it gave up delivering to the DLQ with its service principal, for this
# rule only (the guard's own failures come with the function's role, which its policy allows).
resource "aws_sqs_queue_policy" "guard_dlq" {
  queue_url = module.guard_dlq.url
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid       = "ReputationStopRuleSendsUndeliveredEvents"
      Effect    = "Allow"
      Principal = { Service = "events.amazonaws.com" }
      Action    = "sqs:SendMessage"
      Resource  = module.guard_dlq.arn
      Condition = { ArnEquals = { "aws:SourceArn" = aws_cloudwatch_event_rule.reputation_stop.arn } }
    }]
  })
}

module "sending_guard" {
  source = "../lambda-function"

  name                 = local.guard_name
  description          = "Pauses the configuration set's sending when a reputation stop alarm goes to ALARM."
  handler              = var.handlers.sending_guard
  package_path         = var.packages.sending_guard
  timeout_seconds      = var.sending_guard.timeout_seconds
  memory_mb            = var.sending_guard.memory_mb
  reserved_concurrency = 1
  log_retention_days   = var.log_retention_days
  alarm_actions        = var.alarm_actions

  powertools = {
    service_name      = "sending-guard"
    metrics_namespace = var.powertools_metrics_namespace
    log_level         = var.sending_guard.log_level
  }

  environment = {
    EMAIL_CONFIGURATION_SET = aws_sesv2_configuration_set.this.configuration_set_name
    REPUTATION_STOP_ALARMS  = join(",", [for alarm in local.stop_alarms : alarm.name])
  }

  policy_statements = [
    {
      # Pause this configuration set, nothing else: PutConfigurationSetSendingOptions is authorised
      # against the configuration-set resource type.
      # https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonsimpleemailservicev2.html
      sid       = "PauseTheConfigurationSet"
      actions   = ["ses:PutConfigurationSetSendingOptions"]
      resources = [local.configuration_set_arn]
    },
  ]

  # Two retries of a failed pause, then the guard DLQ.
  async_invocation = {
    maximum_retry_attempts       = 2
    maximum_event_age_in_seconds = 3600
    on_failure_destination_arn   = module.guard_dlq.arn
  }
}

# ---- the email DLQ: deliveries Scheduler gave up on, invocations Lambda gave up on --------------------

module "dlq" {
  source = "../dead-letter-queue"

  name                      = local.dlq_name
  message_retention_seconds = var.dlq_message_retention_seconds
  alarm_description         = "An email could not be delivered to the worker, or the worker failed it after its retries; it waits in ${local.dlq_name}."
  alarm_actions             = var.alarm_actions
}

# Environments applied before the DLQ came from modules/dead-letter-queue keep their queue and alarm.
moved {
  from = aws_sqs_queue.dlq
  to   = module.dlq.aws_sqs_queue.this
}

moved {
  from = aws_cloudwatch_metric_alarm.dlq_not_empty
  to   = module.dlq.aws_cloudwatch_metric_alarm.this
}

# ---- the schedules' group and the role Scheduler assumes to invoke the worker ------------------------

resource "aws_scheduler_schedule_group" "this" {
  name = local.schedule_group_name
}

resource "aws_iam_role" "scheduler" {
  name = "${var.name_prefix}-email-scheduler"
  assume_role_policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Effect    = "Allow"
      Principal = { Service = "scheduler.amazonaws.com" }
      Action    = "sts:AssumeRole"
      # Only this account's schedules, and only those of the email group, may assume the role (confused
      # deputy): Scheduler's aws:SourceArn is the schedule group's ARN,
      # arn:<partition>:scheduler:<region>:<account>:schedule-group/<group>, never a schedule's
      # (https://docs.aws.amazon.com/scheduler/latest/UserGuide/cross-service-confused-deputy-prevention.html,
      # https://docs.aws.amazon.com/scheduler/latest/UserGuide/setting-up.html#setting-up-execution-role).
      Condition = {
        StringEquals = { "aws:SourceAccount" = local.account_id }
        ArnEquals    = { "aws:SourceArn" = local.schedule_group_arn }
      }
    }]
  })
}

resource "aws_iam_role_policy" "scheduler" {
  name = "invoke-email-worker"
  role = aws_iam_role.scheduler.id
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      {
        Sid      = "InvokeEmailWorker"
        Effect   = "Allow"
        Action   = "lambda:InvokeFunction"
        Resource = module.worker.function_arn
      },
      {
        # Scheduler writes a delivery it gave up on to the DLQ with this role.
        Sid      = "DeadLetterToEmailDlq"
        Effect   = "Allow"
        Action   = "sqs:SendMessage"
        Resource = module.dlq.arn
      },
    ]
  })
}

# The worker (a deferred email's schedule) and the reconciler create schedules: each hands the
# scheduler role to the new schedule, and to EventBridge Scheduler only.
locals {
  pass_scheduler_role = {
    # CreateSchedule hands the scheduler role to the new schedule, that is to EventBridge Scheduler
    # (iam:PassedToService, https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_iam-condition-keys.html#ck_PassedToService;
    # PassRole as CreateSchedule's dependent action:
    # https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazoneventbridgescheduler.html).
    sid       = "PassSchedulerRole"
    actions   = ["iam:PassRole"]
    resources = [aws_iam_role.scheduler.arn]
    conditions = [
      { test = "StringEquals", variable = "iam:PassedToService", values = ["scheduler.amazonaws.com"] },
    ]
  }
}

# ---- the worker -----------------------------------------------------------------------------------

module "worker" {
  source = "../lambda-function"

  name                 = local.worker_name
  description          = "Sends one campaign email per task, at most once, when its schedule fires."
  handler              = var.handlers.worker
  package_path         = var.packages.worker
  timeout_seconds      = var.worker.timeout_seconds
  memory_mb            = var.worker.memory_mb
  reserved_concurrency = local.worker_reserved_concurrency
  log_retention_days   = var.log_retention_days
  alarm_actions        = var.alarm_actions

  powertools = {
    service_name      = "email-worker"
    metrics_namespace = var.powertools_metrics_namespace
    log_level         = var.worker.log_level
  }

  environment = {
    TASKS_TABLE                  = var.tasks_table.name
    CONTACTS_TABLE               = var.contact_ledger.name
    EMAIL_CONFIGURATION_SET      = aws_sesv2_configuration_set.this.configuration_set_name
    EMAIL_SEND_GRACE_SECONDS     = tostring(var.send_grace_seconds)
    EMAIL_PAUSED_RECHECK_SECONDS = tostring(var.paused_recheck_seconds)
    CLAIM_LEASE_MARGIN_SECONDS   = tostring(local.claim_lease_margin_seconds)
    FIRST_CONTACT_GAP_SECONDS    = tostring(var.first_contact.gap_seconds)
    FIRST_CONTACTS_PER_30_DAYS   = tostring(var.first_contact.per_30_days)
    SENDING_DOMAIN               = local.sender_domain
    WARMUP_START_DATE            = coalesce(var.warmup.start_date, "none")
    WARMUP_DAILY_CAPS            = join(",", [for cap in var.warmup.daily_caps : tostring(cap)])
    # A deferred first step's schedule invokes this function again; its ARN is built from its name, as
    # the function's own output would make this environment depend on itself.
    EMAIL_SCHEDULE_GROUP     = aws_scheduler_schedule_group.this.name
    EMAIL_WORKER_ARN         = local.worker_arn
    EMAIL_SCHEDULER_ROLE_ARN = aws_iam_role.scheduler.arn
    EMAIL_DLQ_ARN            = module.dlq.arn
  }

  policy_statements = [
    {
      # Read the task and a follow-up's earlier steps: email tasks only.
      sid        = "ReadEmailTasks"
      actions    = ["dynamodb:GetItem"]
      resources  = [var.tasks_table.arn]
      conditions = local.email_task_keys
    },
    {
      # Claim the task, record the outcome; the counters change in the same transaction, whose items
      # are all Updates (no ConditionCheck), each authorized as UpdateItem with its own key
      # (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis-iam.html).
      sid        = "ClaimAndCompleteEmailTasks"
      actions    = ["dynamodb:UpdateItem"]
      resources  = [var.tasks_table.arn]
      conditions = local.email_task_and_counter_keys
    },
    {
      # Before each send, whether the recipient or its domain is stopped: both ledger records in one
      # strongly consistent BatchGetItem (address#<address>, domain#<domain>), and only those kinds
      # of record (dynamodb:LeadingKeys; Null = false refuses a request without a key).
      sid       = "ReadContactStops"
      actions   = ["dynamodb:BatchGetItem"]
      resources = [var.contact_ledger.arn]
      conditions = [
        { test = "ForAllValues:StringLike", variable = "dynamodb:LeadingKeys", values = [var.contact_ledger.key_patterns.address, var.contact_ledger.key_patterns.domain] },
        { test = "Null", variable = "dynamodb:LeadingKeys", values = ["false"] },
      ]
    },
    {
      # Take the address's first-contact slot (one conditional UpdateItem of its address# record, the
      # send governor's per-address rule) and count the email against the identity's warm-up cap (one
      # conditional UpdateItem of its identity# record of the UTC day): those records only.
      sid       = "TakeFirstContactSlots"
      actions   = ["dynamodb:UpdateItem"]
      resources = [var.contact_ledger.arn]
      conditions = [
        { test = "ForAllValues:StringLike", variable = "dynamodb:LeadingKeys", values = [var.contact_ledger.key_patterns.address, var.contact_ledger.key_patterns.identity] },
        { test = "Null", variable = "dynamodb:LeadingKeys", values = ["false"] },
      ]
    },
    {
      # A deferred first step's schedule is moved (GetSchedule, DeleteSchedule, CreateSchedule), with
      # its later steps': the group's schedules only.
      sid       = "MoveDeferredEmailSchedules"
      actions   = ["scheduler:GetSchedule", "scheduler:CreateSchedule", "scheduler:DeleteSchedule"]
      resources = [local.schedules_arn]
    },
    local.pass_scheduler_role,
    {
      # SendEmail is authorised against the sending identity and the configuration set used, and only
      # from an address of the identity (ses:FromAddress, the address without its display name)
      # (https://docs.aws.amazon.com/ses/latest/dg/control-user-access.html,
      # https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonsimpleemailservicev2.html).
      sid       = "SendWithTheCampaignIdentity"
      actions   = ["ses:SendEmail"]
      resources = [local.identity_arn, local.configuration_set_arn]
      conditions = [{
        test     = local.sender_is_address ? "StringEquals" : "StringLike"
        variable = "ses:FromAddress"
        values   = local.sender_addresses
      }]
    },
  ]

  # Two retries of a failed invocation, then the email DLQ; an email older than the grace period is
  # not worth an invocation (the worker would fail it as too_late).
  async_invocation = {
    maximum_retry_attempts       = 2
    maximum_event_age_in_seconds = var.send_grace_seconds
    on_failure_destination_arn   = module.dlq.arn
  }
}

# The account's suppression list has no resource type in IAM: GetSuppressedDestination can only be
# allowed on "*" (the service authorization reference lists no resource for it), which the
# lambda-function module refuses in policy_statements; so it is this policy, each action named exactly
# (GetAccount, the account's sending quota, the ceiling of the warm-up ramp, has none either).
# https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonsimpleemailservicev2.html
resource "aws_iam_role_policy" "suppression_lookup" {
  #checkov:skip=CKV_AWS_355:ses:GetSuppressedDestination and ses:GetAccount have no resource type; they read one address of the account's suppression list and its sending quota
  name = "read-suppression-list"
  role = module.worker.role_name
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      {
        Sid      = "ReadSuppressionList"
        Effect   = "Allow"
        Action   = "ses:GetSuppressedDestination"
        Resource = "*"
      },
      {
        # While the identity warms up, its daily cap is never above the account's 24-hour quota
        # (GetAccount's SendQuota, https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_GetAccount.html).
        # The request names no resource (an account-level read); that the reference above lists no
        # resource type for it is unconfirmed here.
        Sid      = "ReadSendQuota"
        Effect   = "Allow"
        Action   = "ses:GetAccount"
        Resource = "*"
      },
    ]
  })
}

# ---- the email reconciler --------------------------------------------------------------------------

module "reconciler" {
  source = "../reconciler"

  name                = "${var.name_prefix}-email-reconciler"
  description         = "Recreates missing email schedules, sends overdue emails once, fails emails that are too late or whose delivery is unknown."
  handler             = var.handlers.reconciler
  package_path        = var.packages.reconciler
  schedule_expression = var.reconciler.schedule_expression
  timeout_seconds     = var.reconciler.timeout_seconds
  log_retention_days  = var.log_retention_days
  alarm_actions       = var.alarm_actions

  powertools = {
    service_name      = "email-reconciler"
    metrics_namespace = var.powertools_metrics_namespace
    log_level         = var.reconciler.log_level
  }

  environment = {
    TASKS_TABLE                     = var.tasks_table.name
    OPEN_INDEX_SHARDS               = tostring(var.tasks_table.open_index_shards)
    EMAIL_SCHEDULE_GROUP            = aws_scheduler_schedule_group.this.name
    EMAIL_WORKER_ARN                = module.worker.function_arn
    EMAIL_SCHEDULER_ROLE_ARN        = aws_iam_role.scheduler.arn
    EMAIL_DLQ_ARN                   = module.dlq.arn
    EMAIL_SEND_GRACE_SECONDS        = tostring(var.send_grace_seconds)
    RECONCILE_PENDING_AFTER_SECONDS = tostring(local.pending_after_seconds)
    RECONCILE_RUNNING_AFTER_SECONDS = tostring(local.running_after_seconds)
    EMAIL_SCHEDULE_HORIZON_SECONDS  = tostring(local.schedule_horizon_seconds)
  }

  policy_statements = [
    {
      sid       = "ReadOpenTasks"
      actions   = ["dynamodb:Query"]
      resources = [var.tasks_table.open_tasks_index_arn]
    },
    {
      # Conditional reschedule marks and give-ups; the counters change in the same transaction.
      sid        = "MoveStrandedEmailTasks"
      actions    = ["dynamodb:UpdateItem"]
      resources  = [var.tasks_table.arn]
      conditions = local.email_task_and_counter_keys
    },
    {
      sid       = "ManageEmailSchedules"
      actions   = ["scheduler:GetSchedule", "scheduler:CreateSchedule", "scheduler:DeleteSchedule"]
      resources = [local.schedules_arn]
    },
    local.pass_scheduler_role,
  ]
}
