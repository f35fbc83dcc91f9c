"""Pages of real size in the shapes the common site builders give them, generated from a seed.

A company's home page on WordPress, Wix, Squarespace, Shopify, TYPO3 or Jimdo carries 30-500 KB of
markup: a header with a menu of sub-menus, sections of cards nested as deep as the builder nests its
layout (Wix and Elementor twenty levels and more), svg icons, inline scripts and the builder's JSON
state, a cookie banner, and a footer with the company's address, e-mail and phone, often obfuscated
(``info [at] example [dot] de``, TYPO3's ``(at)``, Cloudflare's ``data-cfemail``). Each page here has
500-3,000 start tags, 100-400 links and 30-500 KB of markup, drawn per page from a seeded generator,
so the corpus is the same on every run and nothing of it is stored.

:func:`site_builder_pages` gives ``(name, url, html)`` for each page.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass

BUILDERS = ("wordpress", "wix", "squarespace", "shopify", "typo3", "jimdo")
MIN_BYTES = 30 * 1024
MAX_BYTES = 500 * 1024
MIN_TAGS, MAX_TAGS = 500, 3_000
MIN_LINKS, MAX_LINKS = 100, 400

_WORDS = (
    "maschinenbau", "qualität", "service", "lösungen", "projekt", "team", "kunden", "erfahrung",
    "technik", "beratung", "montage", "quality", "solutions", "project", "customers", "experience",
    "engineering", "consulting", "delivery", "support", "design", "produkte", "products", "news",
    "aktuelles", "karriere", "careers", "standort", "location", "partner", "innovation", "nachhaltig",
    "sustainable", "precision", "automation", "handwerk", "werkstatt", "studio", "collection", "sale",
    "neu", "new", "premium",
)  # fmt: skip
_CITIES = (("Stuttgart", "70173", "711"), ("Berlin", "10115", "30"), ("München", "80331", "89"),
           ("Hamburg", "20095", "40"), ("Köln", "50667", "221"), ("Leipzig", "04109", "341"))  # fmt: skip
_TLDS = ("de", "de", "de", "com", "at", "ch", "co.uk", "fr", "es", "nl")
_LANGUAGES = {"de": "de-DE", "com": "en-US", "at": "de-AT", "ch": "de-CH", "co.uk": "en-GB",
              "fr": "fr-FR", "es": "es-ES", "nl": "nl-NL"}  # fmt: skip
_PAGE_PATHS = ("/", "/", "/impressum", "/kontakt", "/ueber-uns", "/leistungen/montage", "/blog/neuigkeiten")
_MENU = ("Home", "Leistungen", "Produkte", "Referenzen", "Über uns", "Karriere", "Blog", "Kontakt", "Shop",
         "Service", "Downloads", "News", "Team", "Standorte", "FAQ")  # fmt: skip
_ICON_PATH = "M12 2C6.48 2 2 6.48 2 12s4.48 10 10 10 10-4.48 10-10S17.52 2 12 2zm-1 17.93c-3.95-.49-7-3.85"


@dataclass(frozen=True)
class _Company:
    name: str
    domain: str
    language: str
    street: str
    city: str
    postcode: str
    area_code: str
    local: str


def site_builder_pages(count: int = 200, *, seed: int = 46) -> list[tuple[str, str, str]]:
    """``count`` pages as (name, page URL, HTML), the builders taking turns; the same for a seed."""
    pages = []
    for index in range(count):
        rng = random.Random(f"{seed}:{index}")
        builder = BUILDERS[index % len(BUILDERS)]
        company = _company(rng, index)
        path = rng.choice(_PAGE_PATHS)
        url = f"https://www.{company.domain}{path}"
        html = _Page(rng, builder, company).render()
        pages.append((f"{builder}-{index:03d}", url, html))
    return pages


def _company(rng: random.Random, index: int) -> _Company:
    stem = f"{rng.choice(_WORDS)}-{rng.choice(_WORDS)}{index}"
    tld = rng.choice(_TLDS)
    city, postcode, area = rng.choice(_CITIES)
    return _Company(
        name=f"{stem.replace('-', ' ').title()} GmbH",
        domain=f"{stem}.{tld}",
        language=_LANGUAGES[tld],
        street=f"{rng.choice(('Haupt', 'Industrie', 'Bahnhof', 'Garten'))}straße {rng.randint(1, 120)}",
        city=city,
        postcode=postcode,
        area_code=area,
        local=f"{rng.randint(2, 9)}{rng.randint(100000, 999999)}",
    )


_START_TAG = re.compile(r"<[A-Za-z]")


class _Page:
    """One page: header, sections until its tag and link counts are reached, footer, then its scripts."""

    def __init__(self, rng: random.Random, builder: str, company: _Company) -> None:
        self.rng = rng
        self.builder = builder
        self.company = company
        self.tags_goal = rng.randint(MIN_TAGS, MAX_TAGS)
        self.links_goal = rng.randint(MIN_LINKS, MAX_LINKS)
        # Sizes spread evenly on a log scale from 30 KB to 500 KB.
        self.bytes_goal = int(MIN_BYTES * (MAX_BYTES / MIN_BYTES) ** rng.random())
        self.tags = 0
        self.links = 0
        self.serial = 0

    # -- small parts ---------------------------------------------------------------------------
    def words(self, low: int, high: int) -> str:
        return " ".join(self.rng.choice(_WORDS) for _ in range(self.rng.randint(low, high)))

    def uid(self) -> str:
        self.serial += 1
        return f"{self.builder[:2]}{self.serial:x}{self.rng.randint(0, 0xFFFF):04x}"

    def link(self, text: str, href: str | None = None, css: str = "") -> str:
        if href is None:
            href = self.rng.choice(
                (
                    f"/{self.rng.choice(_WORDS)}/",
                    f"/{self.rng.choice(_WORDS)}/{self.rng.choice(_WORDS)}",
                    f"https://www.{self.company.domain}/{self.rng.choice(_WORDS)}.html",
                    "#",
                    "#top",
                    f"/blog/{self.words(2, 4).replace(' ', '-')}/",
                    f"/wp-content/uploads/{self.uid()}.pdf",
                    f"?page={self.rng.randint(1, 9)}",
                    f"../{self.rng.choice(_WORDS)}",
                )
            )
        self.links += 1
        classes = f' class="{css}"' if css else ""
        return f'<a href="{href}"{classes}>{text}</a>'

    def icon(self) -> str:
        return (
            f'<svg class="icon icon-{self.rng.choice(_WORDS)}" viewBox="0 0 24 24" aria-hidden="true">'
            f'<path d="{_ICON_PATH}"/><circle cx="12" cy="12" r="{self.rng.randint(2, 9)}"/></svg>'
        )

    def nest(self, inner: str, depth: int, css: Callable[[int], str]) -> str:
        """``inner`` wrapped in ``depth`` divs, the builder's layout wrappers."""
        opened = "".join(f'<div class="{css(level)}">' for level in range(depth))
        return opened + inner + "</div>" * depth

    # -- the builder's layout ------------------------------------------------------------------
    def wrapper_css(self, level: int) -> str:
        return {
            "wordpress": ("elementor-section elementor-top-section", "elementor-container",
                          "elementor-column elementor-col-50", "elementor-widget-wrap",
                          "elementor-element elementor-widget", "elementor-widget-container"),
            "wix": ("comp-" + self.uid(), "wixui-column-strip", "_1ncY2 wixui-section", "Ba-sA",
                    "_3BQmz", "wixui-rich-text"),
            "squarespace": ("page-section", "content-wrapper", "sqs-layout sqs-grid-12", "row sqs-row",
                            "col sqs-col-6 span-6", "sqs-block html-block", "sqs-block-content"),
            "shopify": ("shopify-section", "page-width", "grid grid--uniform",
                        "grid__item medium-up--one-third", "card-wrapper", "card__content"),
            "typo3": ("frame frame-default frame-type-textmedia", "ce-textpic ce-center", "ce-gallery",
                      "ce-outer", "ce-inner", "ce-bodytext"),
            "jimdo": ("j-module n j-text", "cc-m-" + self.uid(), "j-hgrid", "cc-m-hgrid-column",
                      "j-module n j-imageSubtitle", "cc-m-textwithimage"),
        }[self.builder][level % 6]  # fmt: skip

    def depth(self) -> int:
        low, high = {"wix": (10, 22), "wordpress": (8, 16), "squarespace": (6, 12), "shopify": (5, 10),
                     "typo3": (4, 9), "jimdo": (5, 11)}[self.builder]  # fmt: skip
        return self.rng.randint(low, high)

    def menu(self) -> str:
        items = []
        for label in self.rng.sample(_MENU, self.rng.randint(6, 12)):
            sub = "".join(
                f'<li class="menu-item">{self.link(self.words(1, 3).title())}</li>'
                for _ in range(self.rng.randint(0, 8))
            )
            submenu = f'<ul class="sub-menu">{sub}</ul>' if sub else ""
            href = f"/{label.lower().replace(' ', '-')}/"
            items.append(
                f'<li class="menu-item menu-item-has-children">{self.link(label, href)}{submenu}</li>'
            )
        return (
            f'<nav class="main-navigation" aria-label="Menu"><button class="menu-toggle">{self.icon()}'
            f'<span>Menü</span></button><ul id="menu-main" class="menu">{"".join(items)}</ul></nav>'
        )

    def header(self) -> str:
        logo = self.link(f'<img src="/logo.svg" alt="{self.company.name}" width="180" height="48">', "/")
        search = '<form role="search" action="/"><input type="search" name="s"><button>Suche</button></form>'
        return (
            f'<header id="masthead" class="site-header"><div class="site-branding">{logo}</div>'
            f"{self.menu()}{search}</header>"
        )

    def card(self) -> str:
        kind = self.rng.random()
        if self.builder == "shopify" or kind < 0.2:
            handle = self.words(2, 3).replace(" ", "-")
            price = f"{self.rng.randint(9, 999)},{self.rng.randint(0, 99):02d} €"
            return (
                f'<div class="card"><div class="card__media">'
                f"{self.link(f'<img src=/cdn/{handle}.jpg loading=lazy alt=x>', f'/products/{handle}')}"
                f'</div><h3 class="card__heading">'
                f"{self.link(self.words(2, 4).title(), f'/products/{handle}')}</h3>"
                f'<div class="price"><span class="price-item">{price}</span></div></div>'
            )
        if kind < 0.5:
            return (
                f'<article class="post"><h2 class="entry-title">'
                f"{self.link(self.words(3, 7).capitalize())}</h2>"
                f"<p>{self.words(15, 45)}. <strong>{self.words(1, 3)}</strong> {self.words(5, 25)}.</p>"
                f"<p>{self.link('Weiterlesen', css='more-link')}</p></article>"
            )
        if kind < 0.75:
            return (
                f'<div class="feature">{self.icon()}<h4>{self.words(1, 3).title()}</h4>'
                f"<p>{self.words(10, 30)}.</p><ul>"
                + "".join(f"<li>{self.words(2, 6)}</li>" for _ in range(self.rng.randint(2, 6)))
                + "</ul></div>"
            )
        rows = "".join(
            f"<tr><td>{self.words(1, 2)}</td><td>{self.rng.randint(1, 500)}</td>"
            f"<td>{self.words(1, 3)}</td></tr>"
            for _ in range(self.rng.randint(2, 8))
        )
        return (
            '<table class="specs"><thead><tr><th>Typ</th><th>Wert</th><th>Info</th></tr></thead>'
            f"<tbody>{rows}</tbody></table>"
        )

    def section(self) -> str:
        cards = "".join(self.card() for _ in range(self.rng.randint(2, 6)))
        heading = f"<h2>{self.words(2, 5).title()}</h2>"
        return self.nest(heading + cards, self.depth(), self.wrapper_css)

    def email_markup(self) -> str:
        local = self.rng.choice(("info", "kontakt", "office", "mail", "hello", "vertrieb"))
        address = f"{local}@{self.company.domain}"
        name, suffix = self.company.domain.rsplit(".", 1)
        form = self.rng.randrange(6)
        if form == 0:
            return f"E-Mail: {self.link(address, f'mailto:{address}')}"
        if form == 1:
            return f"E-Mail: {address}"
        if form == 2:
            return f"E-Mail: {local} [at] {name} [dot] {suffix}"
        if form == 3:  # TYPO3's spam protection: a script link and "(at)" in the text
            self.links += 1
            shifted = "".join(chr(ord(c) + 1) for c in f"mailto:{address}")
            script = f"javascript:linkTo_UnCryptMailto('{shifted}');"
            return f'<a href="{script}">{local}(at){self.company.domain}</a>'
        if form == 4:  # Cloudflare's e-mail protection
            key = self.rng.randint(1, 255)
            encoded = f"{key:02x}" + "".join(f"{ord(c) ^ key:02x}" for c in address)
            self.links += 1
            return (
                f'<a href="/cdn-cgi/l/email-protection#{encoded}"><span class="__cf_email__" '
                f'data-cfemail="{encoded}">[email&#160;protected]</span></a>'
            )
        return f"Mail: {local}(at){name}(punkt){suffix}"

    def phone_markup(self) -> str:
        national = f"0{self.company.area_code} {self.company.local}"
        international = f"+49 {self.company.area_code} {self.company.local}"
        form = self.rng.randrange(4)
        if form == 0:
            return f"Tel.: {self.link(international, f'tel:+49{self.company.area_code}{self.company.local}')}"
        if form == 1:
            return f"Telefon: {national}<br>Fax: {national[:-1]}9"
        if form == 2:
            return f"Phone: {international}"
        return f"<span>{self.icon()}</span> {international}"

    def footer(self) -> str:
        columns = "".join(
            f'<div class="footer-widget"><h4>{self.words(1, 2).title()}</h4><ul>'
            + "".join(
                f"<li>{self.link(self.words(1, 3).title())}</li>" for _ in range(self.rng.randint(4, 10))
            )
            + "</ul></div>"
            for _ in range(self.rng.randint(2, 4))
        )
        social = "".join(
            self.link(self.icon(), f"https://www.{network}.com/{self.company.domain.split('.')[0]}")
            for network in self.rng.sample(("facebook", "instagram", "linkedin", "youtube", "xing"), 3)
        )
        legal = " | ".join(
            self.link(label, href)
            for label, href in (
                ("Impressum", "/impressum"),
                ("Datenschutz", "/datenschutz"),
                ("AGB", "/agb"),
                ("Kontakt", "/kontakt"),
            )
        )
        address = (
            f"<address><strong>{self.company.name}</strong><br>{self.company.street}<br>"
            f"{self.company.postcode} {self.company.city}<br>{self.phone_markup()}<br>"
            f"{self.email_markup()}</address>"
        )
        return (
            f'<footer id="colophon" class="site-footer"><div class="footer-widgets">{columns}'
            f'<div class="footer-widget contact">{address}</div></div><div class="social">{social}</div>'
            f'<div class="site-info">© 2026 {self.company.name} · {legal}</div></footer>'
        )

    def cookie_banner(self) -> str:
        return (
            '<div id="CybotCookiebotDialog" role="dialog" aria-modal="true"><div class="cb-content">'
            f"<h2>Diese Webseite verwendet Cookies</h2><p>{self.words(20, 40)}.</p>"
            f'<div class="cb-links">{self.link("Datenschutzerklärung", "/datenschutz")} '
            f'{self.link("Impressum", "/impressum")}</div><div class="cb-buttons">'
            '<button id="accept">Alle akzeptieren</button><button id="decline">Ablehnen</button>'
            '<label><input type="checkbox" checked> Notwendig</label><label><input type="checkbox"> '
            "Statistik</label><label><input type=checkbox> Marketing</label></div></div></div>"
        )

    def state_script(self, size: int) -> str:
        """The builder's inline state (Wix warm-up data, Squarespace context, Shopify analytics...)."""
        entries = []
        total = 0
        while total < size:
            entry = (
                f'"{self.uid()}":{{"type":"{self.rng.choice(_WORDS)}","text":"{self.words(3, 12)}",'
                f'"link":"/{self.rng.choice(_WORDS)}/","x":{self.rng.randint(0, 980)},'
                f'"y":{self.rng.randint(0, 9000)}}}'
            )
            entries.append(entry)
            total += len(entry) + 1
        kind = {"wix": 'type="application/json" id="wix-warmup-data"', "shopify": 'id="shopify-features"',
                "squarespace": 'data-name="static-context"', "wordpress": 'id="elementor-frontend-js-before"',
                "typo3": 'type="text/javascript"', "jimdo": 'id="jimdo-data"'}[self.builder]  # fmt: skip
        return f"<script {kind}>window.__STATE__ = {{{','.join(entries)}}};</script>"

    # -- the page ------------------------------------------------------------------------------
    def render(self) -> str:
        company = self.company
        head = (
            f'<!DOCTYPE html><html lang="{company.language}"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{company.name} \u2013 {self.words(2, 5).title()}</title>"
            f'<meta name="description" content="{company.name}: {self.words(8, 20)}">'
            f'<meta property="og:title" content="{company.name}">'
            f'<meta name="generator" content="{self.builder}">'
            + "".join(
                f'<link rel="stylesheet" href="/assets/{self.uid()}.css">'
                for _ in range(self.rng.randint(3, 12))
            )
            + "<style>"
            + "".join(f".{self.uid()}{{margin:{self.rng.randint(0, 40)}px}}" for _ in range(60))
            + "</style>"
            + "</head>"
        )
        body = [f'<body class="home page-template {self.builder}-theme">', self.header()]
        footer = self.footer()  # counted first: sections fill up to the goals around it
        banner = self.cookie_banner()
        sections: list[str] = []
        size = len(head) + len(footer) + len(banner)
        while (self.links < self.links_goal or self._count(sections, footer, body) < self.tags_goal) and (
            size < self.bytes_goal - 4_000
            and self._count(sections, footer, body) < MAX_TAGS - 150
            and self.links < MAX_LINKS - 30
        ):
            section = self.section()
            sections.append(section)
            size += len(section)
        while self.links < MIN_LINKS or self._count(sections, footer, body) < MIN_TAGS:
            sections.append(self.nest(self.card(), 2, self.wrapper_css))
        body += ['<main id="content" class="site-main">', *sections, "</main>", footer, banner]
        page = head + "".join(body)
        scripts = "".join(
            f'<script src="/assets/{self.uid()}.js" defer></script>' for _ in range(self.rng.randint(4, 15))
        )
        room = max(MIN_BYTES, self.bytes_goal) - len(page.encode()) - len(scripts) - 64
        state = self.state_script(room) if room > 200 else ""
        return page + scripts + state + "</body></html>"

    @staticmethod
    def _count(sections: list[str], footer: str, body: list[str]) -> int:
        return sum(len(_START_TAG.findall(part)) for part in (*sections, footer, *body))
