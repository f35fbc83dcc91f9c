"""Rendering a campaign step for one recipient: bounded, sandboxed Jinja2, every placeholder required.

Why Jinja2 and not ``str.format``: ``str.format`` placeholders reach attributes and items of the values
(``{x.__class__}``), so a template would need its own guard; Jinja2's sandboxed environment refuses
unsafe attribute access and method calls, so a template cannot execute code (see the Jinja2 sandbox
documentation), and the immutable variant cannot change the values it is given. ``StrictUndefined``
makes a missing placeholder an error that names it at scheduling time instead of a mail with a hole
(``{{ name | default("there") }}`` states an optional one). Empty values count as missing. The HTML body
is autoescaped: values come from scraped websites and CSV files, neither trusted as markup.

The placeholders are the recipient's values (CSV columns, or a scraped site's company, website and
e-mail), ``email`` (the recipient address), ``campaign_id``, ``step``, ``unsubscribe`` (the rendered
List-Unsubscribe target, for a link in the body: the campaign's own template, or, for a campaign
without one, the environment's one-click link for this recipient and step, ``one_click_links``) and
the campaign's ``postal_address`` and ``data_source`` when it states them (``compliance``).
Headers are checked by ``EmailMessage`` itself: a value with CR or LF in the subject is refused,
naming the field.

What a template may cost is bounded (``template_sandbox``: one template, no include or import; values,
steps, time and output capped), and so is what it makes: each field and the whole message have a size
cap (``message_caps``), a subject may not carry bidirectional controls or zero-width characters
(``subject_characters``), every link of the HTML body must be http(s) or mailto:
(``html_links``), and the unsubscribe target is one URI on the campaign's own host with every value
percent-encoded (``unsubscribe_uri``). Every failure of a template, whatever it raised, is a
``RenderError`` naming the field; planning adds the row.

A campaign with a ``reply_domain`` (``stop_rules``) gives each email its own Reply-To, the reply
address of its task (``reply_addresses``), and, without an ``unsubscribe`` of its own, names the reply
domain's unsubscribe mailbox in List-Unsubscribe beside the one-click link. A rendered subject that
starts with ``Re:`` or ``Fwd:`` is refused on a step that is not threaded, unless the campaign turned
the ``misleading-subject`` rule off (``compliance``).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

from jinja2 import StrictUndefined, Template, TemplateError, TemplateSyntaxError, meta

from outreach.email_task import EmailMessage
from outreach.errors import UnsafeEmailError
from outreach_operator.campaigns import message_caps, unsubscribe_uri
from outreach_operator.campaigns.compliance.rule_ids import MISLEADING_SUBJECT
from outreach_operator.campaigns.html_links import link_problem
from outreach_operator.campaigns.stop_rules import is_reply_subject, unsubscribe_mailto
from outreach_operator.campaigns.subject_characters import invisible_character
from outreach_operator.campaigns.template_sandbox import BoundedSandbox, render_bounded
from outreach_operator.errors import RenderError, TemplateProblemError
from outreach_operator.report_values import shorten

if TYPE_CHECKING:
    from outreach_operator.campaigns.campaign_file import Campaign
    from outreach_operator.campaigns.one_click_links import OneClickLinks
    from outreach_operator.campaigns.reply_addresses import ReplyAddresses

Kind = Literal["text", "html", "uri"]

_OPTIONS: dict[str, Any] = {"undefined": StrictUndefined, "keep_trailing_newline": True}
_ENVIRONMENTS: dict[Kind, BoundedSandbox] = {
    "text": BoundedSandbox(autoescape=False, **_OPTIONS),
    "html": BoundedSandbox(autoescape=True, **_OPTIONS),
    "uri": BoundedSandbox(
        autoescape=False,
        encode=unsubscribe_uri.percent_encoded,
        filters={"urlencode": unsubscribe_uri.urlencode},
        **_OPTIONS,
    ),
}


@lru_cache(maxsize=256)
def compile_template(source: str, kind: Kind = "text") -> Template:
    """The compiled template of ``source``; raises TemplateProblemError with the line for a syntax error,
    a template that uses another one, or one nested too deeply to compile."""
    try:
        return _ENVIRONMENTS[kind].compile_bounded(source)
    except TemplateSyntaxError as exc:
        raise TemplateProblemError(f"template error on line {exc.lineno}: {exc.message}") from exc
    except TemplateError as exc:
        raise TemplateProblemError(f"template error: {exc}") from exc
    except RecursionError as exc:
        raise TemplateProblemError("template error: nested too deeply to compile") from exc


def template_variables(source: str, kind: Kind = "text") -> frozenset[str]:
    """The placeholders ``source`` takes from its values (Jinja2's ``meta.find_undeclared_variables``:
    a name the template sets itself does not count); TemplateProblemError as ``compile_template``."""
    compile_template(source, kind)
    return frozenset(meta.find_undeclared_variables(_ENVIRONMENTS[kind].parse(source)))


def render_template(
    field: str, source: str, values: Mapping[str, str], *, cap: int, kind: Kind = "text"
) -> str:
    """``source`` rendered with ``values``, its output at most ``cap`` characters; raises RenderError
    naming ``field`` for anything that goes wrong."""
    template = compile_template(source, kind)
    try:
        return render_bounded(template, values, cap)
    except TemplateError as exc:
        raise RenderError(field, shorten(str(exc), 500)) from exc
    except RecursionError as exc:
        raise RenderError(field, "calls nest too deeply (a macro that calls itself?)") from exc
    except Exception as exc:  # whatever a template raised: a row refused, never a traceback
        raise RenderError(field, f"{type(exc).__name__}: {shorten(str(exc), 500)}") from exc


def _unsubscribe(
    campaign: Campaign, context: Mapping[str, str], step: int, recipient: str, links: OneClickLinks | None
) -> str:
    """The List-Unsubscribe target: the campaign's own template rendered, else the one-click link; held
    to one URI on the template's (or the endpoint's) host either way."""
    if campaign.unsubscribe is not None:
        template = campaign.unsubscribe
        target = render_template(
            "unsubscribe", template, context, cap=message_caps.UNSUBSCRIBE_CHARS, kind="uri"
        )
    elif links is not None:
        template = links.base_url
        target = links.link(step, recipient)
    else:
        raise RenderError(
            "unsubscribe", "the campaign has no unsubscribe of its own and no one-click endpoint was given"
        )
    problem = unsubscribe_uri.target_problem(target, template)
    if problem is not None:
        raise RenderError("unsubscribe", f"{shorten(target)!r} {problem}")
    return target


def _reply_to(campaign: Campaign, step: int, recipient: str, replies: ReplyAddresses | None) -> str:
    """The Reply-To: the file's ``reply_to``, or with a ``reply_domain`` the email's reply address."""
    if campaign.reply_domain is None:
        return campaign.reply_to
    if replies is None:
        raise RenderError("reply_to", "the campaign has a reply_domain and no reply addresses were given")
    return replies.address(step, recipient)


def render_step(
    campaign: Campaign,
    step: int,
    recipient: str,
    values: Mapping[str, str],
    links: OneClickLinks | None = None,
    replies: ReplyAddresses | None = None,
) -> EmailMessage:
    """Step ``step`` (1-based) of ``campaign`` for ``recipient``, its placeholders from ``values``; a
    campaign without an ``unsubscribe`` of its own takes each target from ``links``, one with a
    ``reply_domain`` each Reply-To from ``replies``."""
    definition = campaign.steps[step - 1]
    context = {name: value for name, value in values.items() if value != ""}
    context.update(email=recipient, campaign_id=campaign.campaign_id, step=str(step))
    context.update(campaign.sender_statements())
    context["unsubscribe"] = _unsubscribe(campaign, context, step, recipient, links)
    prefix = f"steps.{step - 1}"
    subject = render_template(
        f"{prefix}.subject", definition.subject, context, cap=message_caps.SUBJECT_CHARS
    )
    invisible = invisible_character(subject)
    if invisible is not None:
        raise RenderError(f"{prefix}.subject", invisible)
    if is_reply_subject(subject) and not campaign.threaded(step) and not campaign.waives(MISLEADING_SUBJECT):
        raise RenderError(
            f"{prefix}.subject", "starts with 'Re:' or 'Fwd:' after rendering: the step is not threaded"
        )
    text = render_template(f"{prefix}.text", definition.text, context, cap=message_caps.TEXT_BYTES)
    html = ""
    if definition.html:
        html = render_template(
            f"{prefix}.html", definition.html, context, cap=message_caps.HTML_BYTES, kind="html"
        )
        unsafe_link = link_problem(html)
        if unsafe_link is not None:
            raise RenderError(f"{prefix}.html", unsafe_link)
    fields = {"subject": subject, "text": text, "html": html, "unsubscribe": context["unsubscribe"]}
    oversized = message_caps.too_large(prefix, fields)
    if oversized is not None:
        raise RenderError(*oversized)
    mailto = ""
    if campaign.reply_domain is not None and campaign.unsubscribe is None:
        mailto = unsubscribe_mailto(campaign.reply_domain)
    reply_to = _reply_to(campaign, step, recipient, replies)
    try:
        return EmailMessage(
            sender=campaign.sender,
            to=recipient,
            subject=subject,
            text=text,
            html=html,
            reply_to=reply_to,
            unsubscribe=context["unsubscribe"],
            unsubscribe_mailto=mailto,
        )
    except UnsafeEmailError as exc:
        field, _, reason = str(exc).partition(": ")
        raise RenderError(f"{prefix}.{field}" if field in {"subject", "text"} else field, reason) from exc
