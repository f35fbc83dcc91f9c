"""Email campaigns: the campaign file, its recipients, the rendered messages and the send plan."""
