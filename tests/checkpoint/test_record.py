"""Checkpoint entries on the session tree: the files at any node, markers, and what pi sees."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pitui.checkpoint.record import CheckpointIndex, changes_files, checkpoint_data, entry_data
from pitui.checkpoint.store import Capture, Change, Skipped
from pitui.session import SessionStore
from pitui.session.flatten import flatten
from pitui.session.shapes import CHECKPOINT_TYPE


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def assistant(text: str, calls: list[tuple[str, str]] = ()) -> dict[str, Any]:  # type: ignore[assignment]
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    content += [{"type": "toolCall", "id": i, "name": n, "arguments": {}} for i, n in calls]
    return {
        "role": "assistant",
        "content": content,
        "stopReason": "toolUse" if calls else "stop",
        "timestamp": 1,
    }


def result(call_id: str, name: str) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": "ok"}],
        "isError": False,
        "timestamp": 1,
    }


def checkpoint(store: SessionStore, commit: str, reason: str, count: int = 0) -> str:
    capture = Capture(commit * 40, "0" * 40)
    changes = [Change(f"f{i}", "M") for i in range(count)]
    return store.append_custom(CHECKPOINT_TYPE, entry_data(capture, reason, None, changes))


def build(tmp_path: Path, with_checkpoints: bool = True) -> tuple[SessionStore, dict[str, str]]:
    store = SessionStore.create(tmp_path / f"s{with_checkpoints}", "/work/project")
    ids: dict[str, str] = {}
    ids["u1"] = store.append_message(user("refactor"))
    ids["a1"] = store.append_message(assistant("reading", [("c1", "read")]))
    ids["r1"] = store.append_message(result("c1", "read"))
    ids["a2"] = store.append_message(assistant("writing", [("c2", "write"), ("c3", "bash")]))
    if with_checkpoints:
        ids["pre"] = checkpoint(store, "a", "before-change", 1)
    ids["r2"] = store.append_message(result("c2", "write"))
    ids["r3"] = store.append_message(result("c3", "bash"))
    ids["a3"] = store.append_message(assistant("done"))
    if with_checkpoints:
        ids["post"] = checkpoint(store, "b", "after-run", 3)
    ids["u2"] = store.append_message(user("more"))
    ids["a4"] = store.append_message(assistant("ok"))
    return store, ids


def test_the_files_at_each_node(tmp_path: Path) -> None:
    store, ids = build(tmp_path)
    index = CheckpointIndex(store)

    def at(name: str) -> tuple[str, bool] | None:
        state = index.state_at(ids[name])
        return (state.checkpoint.commit[0], state.exact) if state else None

    # Before the run's first change: the run's first checkpoint, below, holds these files.
    assert at("u1") == ("a", True) and at("r1") == ("a", True)
    assert at("a2") == ("a", True)  # the assistant message that asked to write: before it ran
    assert at("r2") == ("a", False)  # inside the run, after a write: only approximately
    assert at("a3") == ("b", True)  # the end of the run
    assert at("u2") == ("b", True) and at("a4") == ("b", True)
    assert index.run_markers() == {ids["a3"]: 3}
    # A restore away from a3 saved the folder there: that is now the latest look at a3.
    store.branch(ids["a3"])
    saved = checkpoint(store, "c", "before-restore", 1)
    assert index.state_at(ids["a3"]).checkpoint.entry_id == saved  # type: ignore[union-attr]
    assert index.state_at(ids["a4"]).checkpoint.commit[0] == "b"  # type: ignore[union-attr]


def test_checkpoint_entries_never_reach_the_model_nor_the_default_tree(tmp_path: Path) -> None:
    store, ids = build(tmp_path)
    plain, _ = build(tmp_path, with_checkpoints=False)
    assert store.project().messages == plain.project().messages
    assert [r.node.id for r in flatten(store, "default")] == [
        i for k, i in ids.items() if k not in ("pre", "post")
    ]


def test_the_entry_shape_round_trips_through_the_file(tmp_path: Path) -> None:
    store, _ = build(tmp_path)
    capture = Capture(
        "d" * 40, "e" * 40, {"secret": 0o600}, (Skipped("big.bin", "larger than 10 MB", 11 << 20),)
    )
    changes = [Change(f"src/{i}.py", "A") for i in range(305)]
    data = entry_data(capture, "after-run", None, changes)
    entry_id = store.append_custom(CHECKPOINT_TYPE, data)
    path = store.path
    store.close()
    reopened = SessionStore.open(path, read_only=True)
    stored = checkpoint_data(reopened.get(entry_id))
    assert stored is not None
    assert stored["counts"] == {"added": 305, "modified": 0, "deleted": 0}
    assert len(stored["changes"]) == 300 and stored["more"] == 5
    assert stored["skipped"] == [
        {"path": "big.bin", "reason": "larger than 10 MB", "size": 11 << 20}
    ]
    # Not a checkpoint: a custom entry of another type, or one without a commit id.
    assert checkpoint_data({"type": "custom", "customType": "x", "data": stored}) is None
    assert checkpoint_data({"type": "custom", "customType": CHECKPOINT_TYPE, "data": {}}) is None
    reopened.close()


def test_the_nodes_before_the_first_prompt_have_the_first_runs_files(tmp_path: Path) -> None:
    """The entries a session starts with (model, thinking level, system prompt), the first
    prompt and the root itself: the first run's before-change checkpoint, taken below them."""
    store = SessionStore.create(tmp_path / "s", "/work/project")
    model = store.append_model_change("openai", "gpt")
    level = store.append_thinking_level_change("off")
    first = store.append_message(user("refactor"))
    store.append_message(assistant("writing", [("c1", "write")]))
    pre = checkpoint(store, "a", "before-change", 0)
    store.append_message(result("c1", "write"))
    store.append_message(assistant("done"))
    post = checkpoint(store, "b", "after-run", 1)
    index = CheckpointIndex(store)
    for entry_id in (None, model, level, first):
        state = index.state_at(entry_id)
        assert state is not None and (state.checkpoint.entry_id, state.exact) == (pre, True)
    # The prompt edited and resubmitted from there: a second run on a sibling branch. The
    # nodes above both runs keep the first run's checkpoint (the earliest in the file).
    store.branch(level)
    store.append_message(user("refactor, but keep the CLI"))
    store.append_message(assistant("writing", [("c2", "bash")]))
    second = checkpoint(store, "c", "before-change", 0)
    store.append_message(result("c2", "bash"))
    assert index.state_at(level).checkpoint.entry_id == pre  # type: ignore[union-attr]
    assert index.state_at(None).checkpoint.entry_id == pre  # type: ignore[union-attr]
    # Pruning keeps what the current branch needs, the nodes above it included.
    assert index.path_commits(store.leaf_id) == {"c" * 40, "a" * 40}
    assert index.get(second) is not None and index.get(post) is not None


def test_a_change_between_a_node_and_the_checkpoint_below_means_no_record(
    tmp_path: Path,
) -> None:
    """A session started elsewhere (pi) whose entries changed files before pitui's first
    checkpoint: the files at the nodes above those changes were never recorded."""
    store = SessionStore.create(tmp_path / "s", "/work/project")
    first = store.append_message(user("in pi"))
    store.append_message(assistant("writing", [("c1", "edit")]))
    changed = store.append_message(result("c1", "edit"))
    later = store.append_message(user("in pitui"))
    store.append_message(assistant("writing", [("c2", "write")]))
    pre = checkpoint(store, "a", "before-change", 0)
    index = CheckpointIndex(store)
    assert index.state_at(first) is None and index.state_at(None) is None
    assert index.state_at(changed).checkpoint.entry_id == pre  # type: ignore[union-attr]
    assert index.state_at(later).checkpoint.entry_id == pre  # type: ignore[union-attr]


def _walked(store: SessionStore, entry_id: str) -> tuple[str, bool] | None:
    """The files at ``entry_id`` by the definition: a walk up the whole path."""
    from pitui.checkpoint.record import changes_files

    index = CheckpointIndex(store)  # fresh: nothing remembered
    node = store.node(entry_id)
    attached = index.attached(node.id)
    if attached:
        return attached[-1].entry_id, True
    exact = True
    cur = node
    while cur is not None:
        ref = index.get(cur.id)
        if ref is not None:
            return ref.entry_id, exact
        if exact and changes_files(store, cur):
            exact = False
        cur = cur.parent
    # Nothing above: the first checkpoint below (file order) with no change in between.
    for ref in index.all():
        below = store.node(ref.entry_id).parent
        while below is not None and below is not node and not changes_files(store, below):
            below = below.parent
        if below is node:
            return ref.entry_id, True
    return None


def test_answers_stay_right_as_the_leaf_grows_branches_and_gets_checkpoints(
    tmp_path: Path,
) -> None:
    """One index kept across appends (it remembers answers near the leaf, so a look from a
    new leaf does not walk the path): the same answers as a walk of the whole path."""
    store, ids = build(tmp_path)
    index = CheckpointIndex(store)

    def check() -> None:
        leaf = store.leaf_id
        assert leaf is not None
        state = index.state_at(leaf)
        got = (state.checkpoint.entry_id, state.exact) if state else None
        assert got == _walked(store, leaf)
        commits = {index.get(n.id).commit for n in store.path_to(leaf) if index.get(n.id)}  # type: ignore[union-attr]
        commits |= {ref.commit for ref in index.attached(leaf)}
        assert index.path_commits(leaf) == commits

    check()
    for turn in range(3):
        store.append_message(user(f"turn {turn}"))
        check()
        store.append_message(assistant("reading", [(f"r{turn}", "read")]))
        store.append_message(result(f"r{turn}", "read"))
        check()  # a read changes nothing: still exact
        store.append_message(assistant("writing", [(f"w{turn}", "write")]))
        store.append_message(result(f"w{turn}", "write"))
        check()  # after a write: only approximately
        checkpoint(store, "cde"[turn], "after-run", 1)
        check()
    store.branch(ids["r2"])  # back inside the first run, then on from there
    check()
    store.append_message(assistant("again"))
    check()
    checkpoint(store, "f", "before-restore", 1)
    store.branch(ids["a4"])
    check()


OPERATIONS = st.lists(
    st.tuples(
        st.sampled_from(["user", "reply", "read", "write", "checkpoint", "branch"]),
        st.integers(min_value=0, max_value=10_000),
    ),
    min_size=1,
    max_size=40,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(operations=OPERATIONS)
def test_the_files_at_every_node_follow_the_definition(
    tmp_path_factory: Any, operations: list[tuple[str, int]]
) -> None:
    """Random sessions (prompts, replies, reads, writes, checkpoints, moves back to any
    entry and on from there): for every node and the root, the index answers what the
    definition says (a walk up; above the first checkpoint, the first one below in file order
    with no change in between), while one index is kept across the appends."""
    store = SessionStore.create(tmp_path_factory.mktemp("s"), "/work/project")
    index = CheckpointIndex(store)
    made = 0
    for kind, pick in operations:
        nodes = store.all_nodes()
        if kind == "branch" and nodes:
            store.branch(nodes[pick % len(nodes)].id)
        elif kind == "user":
            store.append_message(user("u"))
        elif kind == "reply":
            store.append_message(assistant("r"))
        elif kind in ("read", "write"):
            store.append_message(assistant("calling", [(f"c{pick}", kind)]))
            store.append_message(result(f"c{pick}", kind))
        elif kind == "checkpoint":
            made += 1
            checkpoint(store, "0123456789abcdef"[made % 16], "after-run")
        if store.leaf_id is not None:
            state = index.state_at(store.leaf_id)
            got = (state.checkpoint.entry_id, state.exact) if state else None
            assert got == _walked(store, store.leaf_id)
    fresh = CheckpointIndex(store)
    for node in store.all_nodes():
        state = fresh.state_at(node.id)
        got = (state.checkpoint.entry_id, state.exact) if state else None
        assert got == _walked(store, node.id), node.id
    root = fresh.state_at(None)
    expected = None
    for ref in fresh.all():
        cur = store.node(ref.entry_id).parent
        while cur is not None and not changes_files(store, cur):
            cur = cur.parent
        if cur is None:
            expected = ref.entry_id
            break
    assert (root.checkpoint.entry_id if root else None) == expected
