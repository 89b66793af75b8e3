"""The provider loop: litellm's streams consumed off the caller's loop, deltas handed back in
order and merged, cancellation that waits until the call has stopped."""

from __future__ import annotations

import asyncio
import threading

import pytest

from pitui.llm.provider_loop import Batcher, provider_loop, run_on_provider_loop
from pitui.llm.stream import TextDelta, ThinkingDelta, ToolCallDelta, merge_events


def test_the_call_runs_on_another_thread_and_its_result_comes_back() -> None:
    async def where() -> str:
        await asyncio.sleep(0)
        return threading.current_thread().name

    async def main() -> str:
        return await run_on_provider_loop(where())

    assert asyncio.run(main()) == "pitui-provider-loop"


def test_an_error_of_the_call_reaches_the_caller() -> None:
    async def fails() -> None:
        raise ValueError("provider said no")

    async def main() -> None:
        await run_on_provider_loop(fails())

    with pytest.raises(ValueError, match="provider said no"):
        asyncio.run(main())


def test_cancelling_the_caller_stops_the_call_before_the_caller_resumes() -> None:
    """An abort: the caller resumes only when the call has stopped (nothing fed after it)."""
    log: list[str] = []
    started = threading.Event()

    async def slow() -> None:
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            await asyncio.sleep(0.05)  # the stream closing
            log.append("call stopped")
            raise

    async def main() -> None:
        task = asyncio.ensure_future(run_on_provider_loop(slow()))
        await asyncio.to_thread(started.wait, 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        log.append("caller resumed")

    asyncio.run(asyncio.wait_for(main(), 20))
    assert log == ["call stopped", "caller resumed"]


def test_the_caller_loop_keeps_running_while_the_call_works() -> None:
    """A call that never yields (litellm parsing a buffered stream) does not hold up the
    caller's loop: its timers still fire."""
    ticks: list[float] = []

    async def busy() -> None:
        import time

        end = time.monotonic() + 0.5
        while time.monotonic() < end:  # CPU work without an await
            pass

    async def main() -> None:
        async def tick() -> None:
            while True:
                ticks.append(asyncio.get_running_loop().time())
                await asyncio.sleep(0.01)

        ticker = asyncio.ensure_future(tick())
        await run_on_provider_loop(busy())
        ticker.cancel()

    asyncio.run(main())
    assert len(ticks) >= 5


def test_deltas_are_handed_over_in_order_merged_on_the_caller_loop() -> None:
    received: list[object] = []
    threads: set[str] = set()

    def emit(event: object) -> None:
        threads.add(threading.current_thread().name)
        received.append(event)

    async def produce(batch: Batcher[object]) -> None:
        for event in (
            ThinkingDelta("hm"),
            ThinkingDelta("m"),
            TextDelta("Hel"),
            TextDelta("lo"),
            ToolCallDelta(0, "read", '{"pa'),
            ToolCallDelta(0, "read", '{"path": "a"}'),
            ToolCallDelta(1, "bash", "{}"),
            TextDelta("!"),
        ):
            batch.add(event)

    async def main() -> None:
        batch: Batcher[object] = Batcher(
            asyncio.get_running_loop(),
            emit,
            merge_events,  # type: ignore[arg-type]
            interval=10.0,  # one hand-over for all of them
        )
        # As if a hand-over had just happened: the first delta after a quiet spell is handed
        # over at once, and this loop could take it while the provider thread still adds the
        # next (it did, on a loaded machine, about one run in two).
        batch.drain()
        await run_on_provider_loop(produce(batch))
        batch.drain()

    asyncio.run(main())
    assert threads == {threading.main_thread().name}
    assert received == [
        ThinkingDelta("hmm"),
        TextDelta("Hello"),
        ToolCallDelta(0, "read", '{"path": "a"}'),
        ToolCallDelta(1, "bash", "{}"),
        TextDelta("!"),
    ]


def test_hand_overs_are_spaced_by_the_interval() -> None:
    """Deltas arriving faster than the interval are handed over together."""
    batches: list[str] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        batch: Batcher[TextDelta] = Batcher(
            loop,
            lambda e: batches.append(e.text),
            merge_events,  # type: ignore[arg-type]
            interval=0.2,
        )

        async def produce() -> None:
            for i in range(20):
                batch.add(TextDelta(str(i % 10)))
                await asyncio.sleep(0.01)

        await run_on_provider_loop(produce())
        batch.drain()

    asyncio.run(main())
    assert "".join(batches) == "01234567890123456789"
    assert len(batches) < 10


def test_the_provider_loop_is_one_loop_for_every_call() -> None:
    loops: list[asyncio.AbstractEventLoop] = []

    async def which() -> None:
        loops.append(asyncio.get_running_loop())

    async def main() -> None:
        await run_on_provider_loop(which())
        await run_on_provider_loop(which())

    asyncio.run(main())
    asyncio.run(main())
    assert loops[0] is provider_loop() and all(loop is loops[0] for loop in loops)
