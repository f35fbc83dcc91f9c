"""The SES message tags that tie each sent email, and every SES event about it, back to its task.

SendEmail carries three ``EmailTags``: ``outreach-campaign`` (the campaign id, every character outside
``[A-Za-z0-9-]`` written as ``_`` and the two hex digits of each of its UTF-8 bytes, so ``_`` is ``_5F``
and ``.`` is ``_2E``), ``outreach-step`` (``"2"``) and ``outreach-task`` (the 32 hex digits of the task
id ``email#<campaign>#<digest>``). SES allows only ``[A-Za-z0-9_-]`` in a tag's name and value, at most
256 characters: https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_MessageTag.html
Events carry them back as ``mail.tags`` = ``{name: [value]}``:
https://docs.aws.amazon.com/ses/latest/dg/event-publishing-retrieving-sns-contents.html#event-publishing-retrieving-sns-contents-mail-object
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from outreach.errors import InvalidJobInputError, MalformedFieldError
from outreach.task_ids import validate_job_id
from outreach.task_model import Task

if TYPE_CHECKING:
    from mypy_boto3_sesv2.type_defs import MessageTagTypeDef

CAMPAIGN_TAG = "outreach-campaign"
STEP_TAG = "outreach-step"
TASK_TAG = "outreach-task"
TAGS = (CAMPAIGN_TAG, STEP_TAG, TASK_TAG)
TAG_VALUE_CHARS = 256

_PLAIN = re.compile(r"[A-Za-z0-9-]")
_ENCODED = re.compile(r"(?:[A-Za-z0-9-]|_[0-9A-F]{2})+")
_ESCAPE = re.compile(r"_([0-9A-F]{2})")
_DIGEST = re.compile(r"[0-9a-f]{32}")
_STEP = re.compile(r"[1-9][0-9]{0,5}")


@dataclass(frozen=True)
class TaskRef:
    """The email task an SES event is about: its campaign, step and task id."""

    campaign_id: str
    step: int
    task_id: str


def encode_campaign(campaign_id: str) -> str:
    """The tag value of a campaign id (see the module docstring); not checked for length."""
    return "".join(
        char if _PLAIN.fullmatch(char) else "".join(f"_{byte:02X}" for byte in char.encode())
        for char in campaign_id
    )


def decode_campaign(value: str) -> str:
    """The campaign id of a tag value; ``MalformedFieldError`` (``outreach-campaign``) for a value that
    is not the encoding of a valid campaign id, written the one way ``encode_campaign`` writes it."""
    if not _ENCODED.fullmatch(value):
        raise MalformedFieldError(CAMPAIGN_TAG, "not [A-Za-z0-9-] and _XX escapes")
    raw = bytearray()
    position = 0
    for escape in _ESCAPE.finditer(value):
        raw += value[position : escape.start()].encode()
        raw.append(int(escape.group(1), 16))
        position = escape.end()
    raw += value[position:].encode()
    try:
        campaign_id = raw.decode()
    except UnicodeDecodeError as exc:
        raise MalformedFieldError(CAMPAIGN_TAG, "escapes that are not UTF-8") from exc
    if encode_campaign(campaign_id) != value:
        raise MalformedFieldError(CAMPAIGN_TAG, "an escape of a character written plain")
    try:
        return validate_job_id(campaign_id)
    except InvalidJobInputError as exc:
        raise MalformedFieldError(CAMPAIGN_TAG, "not a campaign id") from exc


def check_taggable(campaign_id: str) -> str:
    """The campaign's tag value, or ``MalformedFieldError`` (``outreach-campaign``) if SES would refuse
    it (longer than 256 characters): the planner checks this before it writes a campaign's tasks."""
    value = encode_campaign(campaign_id)
    if len(value) > TAG_VALUE_CHARS:
        raise MalformedFieldError(
            CAMPAIGN_TAG, f"the campaign id is {len(value)} characters as a tag, SES allows {TAG_VALUE_CHARS}"
        )
    return value


def _digest(task: Task) -> str:
    prefix = f"email#{task.job_id}#"
    digest = task.task_id.removeprefix(prefix)
    if not task.task_id.startswith(prefix) or not _DIGEST.fullmatch(digest):
        raise MalformedFieldError(TASK_TAG, "the task id is not email#<campaign>#<32 hex digits>")
    return digest


def email_tags(task: Task) -> list[MessageTagTypeDef]:
    """The ``EmailTags`` of the email task's SendEmail; ``MalformedFieldError`` naming the tag that
    cannot be written."""
    if task.email is None:
        raise MalformedFieldError(STEP_TAG, f"{task.task_id} is not an email task")
    return [
        {"Name": CAMPAIGN_TAG, "Value": check_taggable(task.job_id)},
        {"Name": STEP_TAG, "Value": str(task.email.step)},
        {"Name": TASK_TAG, "Value": _digest(task)},
    ]


def _value(tags: Mapping[str, Any], name: str) -> str | None:
    """The one value of tag ``name``, ``None`` when absent."""
    if name not in tags:
        return None
    values = tags[name]
    if isinstance(values, str) or not isinstance(values, Sequence) or len(values) != 1:
        raise MalformedFieldError(name, "not a list of one value")
    value = values[0]
    if not isinstance(value, str) or not 0 < len(value) <= TAG_VALUE_CHARS:
        raise MalformedFieldError(name, f"not text of 1-{TAG_VALUE_CHARS} characters")
    return value


def task_ref(tags: Mapping[str, Sequence[str]]) -> TaskRef | None:
    """The task the tags of an SES event name; ``None`` when none of the outreach tags is there (mail
    this pipeline did not send), ``MalformedFieldError`` naming the tag that is missing or malformed."""
    if not isinstance(tags, Mapping):
        raise MalformedFieldError("tags", "not a map of tag names to values")
    values = {name: _value(tags, name) for name in TAGS}
    if all(value is None for value in values.values()):
        return None
    for name, value in values.items():
        if value is None:
            raise MalformedFieldError(name, "missing while the other outreach tags are there")
    campaign, step, digest = (str(values[name]) for name in TAGS)
    campaign_id = decode_campaign(campaign)
    if not _STEP.fullmatch(step):
        raise MalformedFieldError(STEP_TAG, "not a step number")
    if not _DIGEST.fullmatch(digest):
        raise MalformedFieldError(TASK_TAG, "not 32 lower-case hex digits")
    return TaskRef(campaign_id=campaign_id, step=int(step), task_id=f"email#{campaign_id}#{digest}")
