"""Shared test settings: hypothesis profile sized for a 2-core machine."""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "attnlab",
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("attnlab")
