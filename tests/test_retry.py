"""pitui.retry: how often a failed request is tried again, and how long pitui waits first."""

from __future__ import annotations

from pitui.config.settings import Settings
from pitui.retry import RetryPolicy


def test_waits_double_from_the_base_up_to_the_cap() -> None:
    policy = RetryPolicy(base_delay=2.0, max_delay=10.0)
    assert [policy.delay(n) for n in (1, 2, 3, 4, 5)] == [2.0, 4.0, 8.0, 10.0, 10.0]


def test_a_servers_retry_after_is_never_cut_short() -> None:
    policy = RetryPolicy(base_delay=2.0, max_delay=10.0)
    assert policy.delay(1, retry_after=5.0) == 5.0
    assert policy.delay(3, retry_after=1.0) == 8.0  # our own wait is longer already
    assert policy.delay(1, retry_after=30.0) == 30.0  # past max_delay: asking sooner is refused


def test_a_request_gets_max_retries_then_gives_up() -> None:
    retries = RetryPolicy(max_retries=2, base_delay=1.0).start()
    assert retries.next_delay() == 1.0 and retries.attempt == 1
    assert retries.next_delay(retry_after=3.0) == 3.0 and retries.attempt == 2
    assert not retries.gave_up
    assert retries.next_delay() is None
    assert retries.gave_up


def test_retries_off_never_wait_and_never_give_up() -> None:
    retries = RetryPolicy(enabled=False).start()
    assert retries.next_delay() is None
    assert not retries.gave_up and retries.attempt == 0


def test_the_settings_section_is_read_in_seconds() -> None:
    settings = Settings.from_dict(
        {"retry": {"enabled": True, "maxRetries": 5, "baseDelayMs": 250, "maxDelayMs": 4000}}
    )
    assert settings.retry.policy() == RetryPolicy(
        enabled=True, max_retries=5, base_delay=0.25, max_delay=4.0
    )
    assert Settings().retry.policy() == RetryPolicy()
