"""Tailor: personalization as a service (the `tailor` console script lives in `tailor.cli`)."""
