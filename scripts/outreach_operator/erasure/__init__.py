"""Erasure of one job's or one address's data from every store the pipeline keeps it in (GDPR Art. 17).

``request`` says what is erased and what mentions it, ``inventory`` finds it store by store, and
``deletion`` deletes what was found; ``outreach data erase`` (``cli/data.py``) runs them.
"""
