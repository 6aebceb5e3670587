"""Tailor personalization service (FastAPI): routes → orchestration → runtime/cache/DB."""
