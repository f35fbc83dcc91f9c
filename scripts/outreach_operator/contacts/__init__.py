"""The operator's reads and writes of the contact ledger that no Lambda function makes.

The core (``outreach.contacts``) owns the keys, the states, the stops and every write that raises a
state (``record_stop``), and cancels an address's open emails (``cancel_open_emails``); this package
adds what only the ``outreach contacts`` command does: reading whole records (``records``), lowering a
``blocked`` or ``bounced`` record to ``ok`` (``unblock``, the one write that lowers a state), and
reaching every open email to a domain (``fan_out``).
"""
