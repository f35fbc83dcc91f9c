"""The names of the campaign lint's rules: what a report calls each, and the key that turns one off.

A campaign turns a rule off only by naming it under ``compliance_waivers`` with its reason
(``campaign_file``); the rules themselves, with their sources, are in ``rules``.
"""

from __future__ import annotations

UNSUBSCRIBE_LINK = "unsubscribe-link"
POSTAL_ADDRESS = "postal-address"
DATA_SOURCE = "data-source"
MISLEADING_SUBJECT = "misleading-subject"

RULE_IDS = (UNSUBSCRIBE_LINK, POSTAL_ADDRESS, DATA_SOURCE, MISLEADING_SUBJECT)
