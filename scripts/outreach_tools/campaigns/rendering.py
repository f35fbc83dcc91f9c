"""Rendering a campaign step for one recipient: Jinja2 templates, sandboxed, every placeholder required.

Why Jinja2 and not ``str.format``: ``str.format`` placeholders reach attributes and items of the values
(``{x.__class__}``), so a template would need its own guard; Jinja2's sandboxed environment refuses
unsafe attribute access and method calls, so a template cannot execute code (see the Jinja2 sandbox
documentation), and the immutable variant cannot change the values it is given. ``StrictUndefined``
makes a missing placeholder an error that names it at scheduling time instead of a mail with a hole
(``{{ name | default("there") }}`` states an optional one). Empty values count as missing. The HTML body
is autoescaped: values come from scraped websites and CSV files, neither trusted as markup.

The placeholders are the recipient's values (CSV columns, or a scraped site's company, website and
e-mail), ``email`` (the recipient address), ``campaign_id``, ``step`` and ``unsubscribe`` (the rendered
List-Unsubscribe target, for a link in the body). Headers are checked by ``EmailMessage`` itself: a
value with CR or LF in the subject or the unsubscribe target is refused, naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import TYPE_CHECKING

from jinja2 import StrictUndefined, Template, TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from outreach.email_task import EmailMessage, UnsafeEmail

if TYPE_CHECKING:
    from outreach_tools.campaigns.campaign_file import Campaign

_TEXT = ImmutableSandboxedEnvironment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True)
_HTML = ImmutableSandboxedEnvironment(undefined=StrictUndefined, autoescape=True, keep_trailing_newline=True)


class TemplateProblem(ValueError):
    """A template that does not compile (raised when the campaign file is read)."""


class RenderError(ValueError):
    """A message that cannot be rendered for one recipient: ``field`` says where, the message why."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


@lru_cache(maxsize=256)
def compile_template(source: str, *, html: bool = False) -> Template:
    """The compiled template of ``source``; raises TemplateProblem with the line for a syntax error."""
    try:
        return (_HTML if html else _TEXT).from_string(source)
    except TemplateError as exc:
        line = getattr(exc, "lineno", None)
        raise TemplateProblem(f"template error{f' on line {line}' if line else ''}: {exc}") from exc


def render_template(field: str, source: str, values: Mapping[str, str], *, html: bool = False) -> str:
    """``source`` rendered with ``values``; raises RenderError naming ``field`` and the missing name."""
    template = compile_template(source, html=html)
    try:
        return template.render(values)
    except TemplateError as exc:
        raise RenderError(field, str(exc)) from exc


def render_step(campaign: Campaign, step: int, recipient: str, values: Mapping[str, str]) -> EmailMessage:
    """Step ``step`` (1-based) of ``campaign`` for ``recipient``, its placeholders from ``values``."""
    definition = campaign.steps[step - 1]
    context = {name: value for name, value in values.items() if value != ""}
    context.update(email=recipient, campaign_id=campaign.campaign_id, step=str(step))
    context["unsubscribe"] = render_template("unsubscribe", campaign.unsubscribe, context)
    prefix = f"steps.{step - 1}"
    subject = render_template(f"{prefix}.subject", definition.subject, context)
    text = render_template(f"{prefix}.text", definition.text, context)
    html = render_template(f"{prefix}.html", definition.html, context, html=True) if definition.html else ""
    try:
        return EmailMessage(
            sender=campaign.sender,
            to=recipient,
            subject=subject,
            text=text,
            html=html,
            reply_to=campaign.reply_to,
            unsubscribe=context["unsubscribe"],
        )
    except UnsafeEmail as exc:
        field, _, reason = str(exc).partition(": ")
        raise RenderError(f"{prefix}.{field}" if field in {"subject", "text"} else field, reason) from exc
