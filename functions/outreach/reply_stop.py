"""Whether a recipient's reply stops an email: the ledger's replied campaigns against the task's rules.

The inbound processor records each person's reply on the recipient's ledger record
(``contacts.record_reply``: the campaign in ``replied_campaigns``); the email worker reads it after its
claim, in the same read as the stop check (``contacts.standing_of``, one strongly consistent
BatchGetItem), so a reply recorded before the claim always stops the email. The task's rules decide
(``SequenceRules()`` for a row written before rules existed: a reply stops every campaign's follow-ups):

- ``on_reply: continue``: a reply stops nothing;
- ``on_reply: stop``: a reply in this campaign stops it, and a reply in any other campaign too when
  ``reply_stops_other_campaigns`` (the default). The reason is ``replied: ...``, naming campaigns and
  the time of the latest reply, never the address.
"""

from __future__ import annotations

from outreach import contacts
from outreach.errors import SkipEmailError, UnreadableMessageError
from outreach.sequence_rules import SequenceRules
from outreach.task_model import Task

# How many other campaigns a reason names (a person may have replied in many).
_SHOWN_CAMPAIGNS = 3


def check_not_replied(task: Task, engagement: contacts.Engagement) -> None:
    """Raise ``SkipEmailError`` (``replied: ...``) when the recipient's reply (``engagement``, read after
    the claim) stops this email."""
    fields = task.email
    if fields is None:
        raise UnreadableMessageError("not_an_email_task")
    rules = fields.rules or SequenceRules()
    if rules.on_reply != "stop":
        return
    when = f" (last reply {engagement.replied_at})" if engagement.replied_at else ""
    if engagement.replied_in(task.job_id):
        raise SkipEmailError(f"replied: the recipient replied in this campaign{when}")
    if rules.reply_stops_other_campaigns and engagement.replied_campaigns:
        others = sorted(engagement.replied_campaigns)
        shown = ", ".join(others[:_SHOWN_CAMPAIGNS])
        if len(others) > _SHOWN_CAMPAIGNS:
            shown += f" and {len(others) - _SHOWN_CAMPAIGNS} more"
        raise SkipEmailError(f"replied: the recipient replied in campaign {shown}{when}")
