"""The campaign lint: the law and the mailbox providers' rules, checked before anything is scheduled.

- ``rule_ids``: the rules' names (the keys of a campaign's ``compliance_waivers``).
- ``rules``: each rule, its sources and its check on the campaign file.
- ``lint``: ``lint_campaign``, every rule's verdict with the campaign's waivers applied.

The package imports nothing itself (``rendering`` reads ``rule_ids`` while ``rules`` reads
``rendering``); import from its modules. ``campaign schedule`` refuses a campaign the lint refuses
(also with ``--dry-run``), and ``campaign check FILE`` runs the lint alone.
"""
