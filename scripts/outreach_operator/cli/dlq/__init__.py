"""``outreach dlq``: look into the dead-letter queues, redrive the scrape DLQ, replay the others.

- ``show scrape``: each message with its reason attribute, receive count and its task's status.
- ``redrive scrape``: SQS's own StartMessageMoveTask back to the scrape queue, with progress.
- ``replay pipe``: the dispatch pipe's dead-letter records name a stream batch (shard, sequence range,
  arrival times), not its records and so not its job; the scrape tasks still Pending that were last
  changed in that window are re-dispatched from the table, of the jobs ``--job`` names (required for
  such a record: the window holds every job's tasks written then) or that a record carrying its
  records names.
- ``replay reconciler``: a Scheduler schedule's (or EventBridge rule's) dead-letter message is the
  event it could not deliver, with the target in the ``TARGET_ARN`` attribute
  (https://docs.aws.amazon.com/scheduler/latest/UserGuide/configuring-schedule-dlq.html,
  https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html); the function it names is
  invoked again with that event if it is one of this environment's reconcilers (``OwnFunctions``:
  the root's ``scrape_reconciler_function_name`` / ``email_reconciler_function_name`` outputs, or the
  ``--scrape-reconciler-function`` / ``--email-reconciler-function`` flags, in the session's region
  and the caller's account). Any other target is refused (exit 2) and its message stays.

A replay deletes a message only after what it names was done; a message whose replay failed or was
refused stays. Against prod a redrive or replay asks first (``confirm.confirm_change``).

``command`` holds the click group and its options; the work is in ``show``, ``redrive`` and ``replay``
(the loop over a queue in ``replay_queue``, what a message names in ``pipe`` and ``reconciler``).
"""

from __future__ import annotations

from outreach_operator.cli.dlq.command import dlq

__all__ = ["dlq"]
