"""The campaign file (YAML or JSON): who sends what to whom when, validated with errors naming the field.

A campaign has an id (it becomes the task's ``job_id``), a sender and reply-to address (SES identity
addresses; the sender may carry a display name), optionally its own List-Unsubscribe target, a send
window (weekdays, hours and an IANA time zone), a maximum send rate per minute and its steps: the
first mail and the follow-ups, each sent a number of days after the previous step to the same
recipient. Every step has a
subject, a text body and optionally an HTML body, all templates (see :mod:`.rendering`), compiled here so
a template that does not parse, or uses another template (``include``, ``import``, ``extends``), is
reported with the field it is in before anything else happens. The unsubscribe target must write its
scheme and host (or mailto: address) out before any placeholder (:mod:`.unsubscribe_uri`); without
one, every email links to the environment's one-click unsubscribe endpoint (:mod:`.one_click_links`).
Optionally a ``reply_domain`` (replies come back to the pipeline, each email with its own reply
address), ``stop_rules`` (what a reply and an out-of-office do) and, per follow-up, ``threaded``
(:mod:`.stop_rules`). What the law asks of the sender: ``postal_address``, ``eu_recipients`` with
``data_source``, and ``compliance_waivers`` (a rule of the campaign lint turned off, with the reason):
the lint itself is :mod:`.compliance`. ``pacing``: how often one recipient domain is mailed
(:mod:`.domain_pacing`).

The file itself is a stranger's text too: at most 4 MiB are read (ten steps of the largest text and
HTML bodies are under 4 MiB), and data nested too deeply for the parser (YAML or JSON; a campaign has
four levels) is refused with its reason, not a RecursionError.
"""

from __future__ import annotations

import json
import unicodedata
from datetime import time
from email.utils import getaddresses
from pathlib import Path
from typing import Annotated, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import yaml
from email_validator import EmailNotValidError, validate_email
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from outreach import ses_tags
from outreach.email_task import check_header
from outreach.errors import InvalidJobInputError, MalformedFieldError, UnsafeEmailError
from outreach.task_ids import validate_job_id
from outreach_operator.campaigns.compliance.rule_ids import RULE_IDS
from outreach_operator.campaigns.domain_pacing import Pacing
from outreach_operator.campaigns.rendering import compile_template
from outreach_operator.campaigns.stop_rules import StopRules, checked_reply_domain, owner_address
from outreach_operator.campaigns.unsubscribe_uri import origin_of
from outreach_operator.errors import TemplateProblemError

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
MAX_FILE_BYTES = 4 * 1024 * 1024


class CampaignFileError(ValueError):
    """The campaign file cannot be used: every problem, each with the field it is in."""


def _header_safe(value: str) -> str:
    try:
        return check_header("value", value)
    except UnsafeEmailError as exc:
        raise ValueError(str(exc).removeprefix("value: ")) from exc


def address_of(value: str) -> str:
    """The address of ``Name <addr>`` or of a bare ``addr``, syntax-checked (no DNS), normalised."""
    found = getaddresses([value])
    address = found[0][1] if len(found) == 1 else ""
    if not address:
        raise ValueError(f"not an e-mail address: {value!r}")
    try:
        # test_environment admits the reserved .test domain (the embedded AWS's identity); a sender
        # must be covered by a verified SES identity anyway, so no real mail goes out from one.
        return validate_email(address, check_deliverability=False, test_environment=True).normalized
    except EmailNotValidError as exc:
        raise ValueError(f"not an e-mail address: {value!r}: {exc}") from exc


def _mailbox(value: str) -> str:
    address_of(_header_safe(value))
    return value


def _unsubscribe(value: str) -> str:
    _header_safe(value)
    origin_of(value)  # ValueError: not mailto:/https://, or its host or address not written out
    try:
        compile_template(value, "uri")
    except TemplateProblemError as exc:
        raise ValueError(str(exc)) from exc
    return value


Mailbox = Annotated[str, AfterValidator(_mailbox)]
# What a campaign states to its recipients: one line of plain text, as the bodies show it.
MAX_STATEMENT_CHARS = 300
MAX_WAIVER_REASON_CHARS = 500
MIN_WAIVER_REASON_CHARS = 10


def _one_line(value: str, most: int, least: int = 1) -> str:
    value = value.strip()
    if not least <= len(value) <= most:
        raise ValueError(f"{least} to {most} characters, got {len(value)}")
    if any(unicodedata.category(char) == "Cc" for char in value):
        raise ValueError("one line of text: no control characters (write a comma for a line break)")
    return value


def _statement(value: str) -> str:
    return _one_line(value, MAX_STATEMENT_CHARS)


def _waiver_reason(value: str) -> str:
    return _one_line(value, MAX_WAIVER_REASON_CHARS, MIN_WAIVER_REASON_CHARS)


Statement = Annotated[str, AfterValidator(_statement)]


class SendWindow(BaseModel):
    """When mails may go out: on ``weekdays``, from ``start`` to before ``end``, in ``timezone``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    weekdays: tuple[str, ...] = Field(min_length=1)
    start: time
    end: time
    timezone: str

    @field_validator("weekdays")
    @classmethod
    def _known_days(cls, days: tuple[str, ...]) -> tuple[str, ...]:
        normalised = tuple(day.strip().lower()[:3] for day in days)
        unknown = [day for day, short in zip(days, normalised, strict=True) if short not in WEEKDAYS]
        if unknown:
            raise ValueError(f"unknown weekdays {unknown}; use {', '.join(WEEKDAYS)}")
        return tuple(sorted(set(normalised), key=WEEKDAYS.index))

    @field_validator("start", "end", mode="before")
    @classmethod
    def _quoted_time(cls, value: Any) -> Any:
        # YAML 1.1 reads an unquoted 17:00 as the base-60 integer 1020; refuse rather than guess.
        if not isinstance(value, str | time):
            raise PydanticCustomError(
                "quoted_time",
                'write the time as a quoted "HH:MM" string, got {value}',
                {"value": repr(value)},
            )
        return value

    @field_validator("start", "end")
    @classmethod
    def _whole_minutes(cls, value: time) -> time:
        if value.second or value.microsecond or value.tzinfo is not None:
            raise ValueError("must be a local time in whole minutes (HH:MM)")
        return value

    @field_validator("timezone")
    @classmethod
    def _iana_zone(cls, name: str) -> str:
        try:
            ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"not an IANA time zone: {name!r}") from exc
        return name

    @model_validator(mode="after")
    def _start_before_end(self) -> SendWindow:
        if self.start >= self.end:
            raise ValueError(f"window start {self.start:%H:%M} must be before its end {self.end:%H:%M}")
        return self

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)

    @property
    def weekday_numbers(self) -> frozenset[int]:
        """The window's days as ``datetime.weekday()`` numbers (Monday 0)."""
        return frozenset(WEEKDAYS.index(day) for day in self.weekdays)


class Step(BaseModel):
    """One mail of the campaign: sent ``after_days`` days after the previous step (0 for the first).

    ``threaded``: a follow-up goes out in the thread of the earlier steps (In-Reply-To, References);
    unset, a follow-up is and the first step is not (the first step is the only one with
    ``after_days`` 0). Only a threaded step's subject may start with ``Re:`` (the lint's
    ``misleading-subject``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    after_days: int = Field(default=0, ge=0, le=365)
    threaded: bool | None = None
    subject: str = Field(min_length=1)
    text: str = Field(min_length=1)
    html: str = ""

    @property
    def is_threaded(self) -> bool:
        return self.threaded if self.threaded is not None else self.after_days >= 1

    @field_validator("subject", "text")
    @classmethod
    def _template_parses(cls, source: str) -> str:
        try:
            compile_template(source, "text")
        except TemplateProblemError as exc:
            raise ValueError(str(exc)) from exc
        return source

    @field_validator("html")
    @classmethod
    def _html_template_parses(cls, source: str) -> str:
        try:
            compile_template(source, "html")
        except TemplateProblemError as exc:
            raise ValueError(str(exc)) from exc
        return source


class Campaign(BaseModel):
    """A validated campaign file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    campaign_id: str
    sender: Mailbox
    reply_to: Mailbox
    # None: every email links to the environment's one-click endpoint (``one_click_links``).
    unsubscribe: Annotated[str, AfterValidator(_unsubscribe)] | None = None
    window: SendWindow
    max_per_minute: int = Field(ge=1, le=10_000)
    steps: tuple[Step, ...] = Field(min_length=1, max_length=10)
    # None: replies go to reply_to and the pipeline never sees them.
    reply_domain: Annotated[str, AfterValidator(checked_reply_domain)] | None = None
    stop_rules: StopRules = StopRules()
    # How often one recipient domain is mailed (domain_pacing: its defaults and why).
    pacing: Pacing = Pacing()
    # The sender's postal address ({{ postal_address }} in the bodies; the lint's postal-address).
    postal_address: Statement | None = None
    # Whether recipients are in the EU; then data_source says where their addresses came from.
    eu_recipients: bool = False
    data_source: Statement | None = None
    # A rule of the lint turned off: its name and why (recorded on the campaign's job row).
    compliance_waivers: dict[str, Annotated[str, AfterValidator(_waiver_reason)]] = Field(
        default_factory=dict, max_length=len(RULE_IDS)
    )

    def waives(self, rule: str) -> bool:
        """Whether the campaign turned the lint's ``rule`` off."""
        return rule in self.compliance_waivers

    def sender_statements(self) -> dict[str, str]:
        """The campaign's own placeholders that the law asks for: those it states."""
        found = {"postal_address": self.postal_address, "data_source": self.data_source}
        return {name: value for name, value in found.items() if value is not None}

    @field_validator("compliance_waivers")
    @classmethod
    def _known_rules(cls, waivers: dict[str, str]) -> dict[str, str]:
        unknown = sorted(set(waivers) - set(RULE_IDS))
        if unknown:
            raise ValueError(f"unknown lint rules {unknown}; the rules are {', '.join(RULE_IDS)}")
        return waivers

    def threaded(self, step: int) -> bool:
        """Whether step ``step`` (1-based) goes out in the thread of the earlier steps."""
        return step > 1 and self.steps[step - 1].is_threaded

    @field_validator("reply_to")
    @classmethod
    def _owner_has_ascii_form(cls, value: str) -> str:
        owner_address(value)  # ValueError: replies cannot be forwarded there
        return value

    @field_validator("campaign_id")
    @classmethod
    def _job_id(cls, value: str) -> str:
        try:
            validate_job_id(value)
        except InvalidJobInputError as exc:
            raise ValueError(str(exc).replace("job id", "campaign id")) from exc
        try:
            # Every email carries the campaign as an SES message tag: one SES can carry, or none is sent.
            ses_tags.check_taggable(value)
        except MalformedFieldError as exc:
            raise ValueError(str(exc)) from exc
        return value

    @field_validator("steps")
    @classmethod
    def _follow_ups_later(cls, steps: tuple[Step, ...]) -> tuple[Step, ...]:
        if steps[0].after_days != 0:
            raise ValueError("the first step is sent at the start: its after_days must be 0")
        if steps[0].threaded:
            raise ValueError("the first step answers nothing: it cannot be threaded")
        late = [number for number, step in enumerate(steps, start=1) if number > 1 and step.after_days < 1]
        if late:
            raise ValueError(f"follow-up steps {late} need after_days >= 1")
        return steps


def _describe(error: ValidationError) -> str:
    lines = []
    for problem in error.errors():
        where = ".".join(str(part) for part in problem["loc"]) or "(file)"
        lines.append(f"{where}: {problem['msg'].removeprefix('Value error, ')}")
    return "\n".join(lines)


def parse_campaign(data: Any, *, source: str = "campaign") -> Campaign:
    """Validate already-parsed data; raises CampaignFileError listing every field in error."""
    try:
        return Campaign.model_validate(data)
    except ValidationError as exc:
        raise CampaignFileError(f"{source}: invalid campaign\n{_describe(exc)}") from exc


def load_campaign(path: Path) -> Campaign:
    """Read ``path`` (``.json``, else YAML; at most ``MAX_FILE_BYTES``) and validate it."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CampaignFileError(f"cannot read {path}: {exc}") from exc
    if len(raw) > MAX_FILE_BYTES:
        raise CampaignFileError(
            f"{path}: larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB, the most a campaign file may have"
        )
    kind = path.suffix.lstrip(".") or "YAML"
    try:
        data = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise CampaignFileError(f"{path}: not valid {kind}: {exc}") from exc
    except RecursionError as exc:
        raise CampaignFileError(
            f"{path}: not a campaign: its {kind} is nested too deeply to read (a campaign has four levels)"
        ) from exc
    try:
        return parse_campaign(data, source=str(path))
    except RecursionError as exc:
        raise CampaignFileError(f"{path}: not a campaign: its data is nested too deeply") from exc
