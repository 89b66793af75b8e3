"""Fork and clone (pi 1.6's ``createBranchedSession``): a new file holding one path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pitui.session import codec
from pitui.session.disk import CONVERSATION_ROLES
from pitui.session.entries import new_header, session_file_name
from pitui.session.errors import EntryNotFoundError, SessionError
from pitui.session.ids import new_entry_id
from pitui.session.shapes import message_text
from pitui.session.store import SessionStore
from pitui.session.writer import create_exclusive


def _check_saved(store: SessionStore) -> None:
    if store.path is not None and not store.persisted:
        raise SessionError(
            "This session has not been saved yet. Send a message before cloning or forking it."
        )


def create_branched_session(
    store: SessionStore, leaf_id: str, folder: Path | None = None
) -> SessionStore:
    """A new session with only the root → ``leaf_id`` path: labels re-created, parents re-chained.

    Label entries on the path are dropped and the remaining entries re-chained; a compaction
    whose ``firstKeptEntryId`` pointed at a dropped label points at the next kept entry. Labels
    of kept entries are re-created at the end with their original timestamps.
    """
    if leaf_id not in store:
        raise EntryNotFoundError(leaf_id)
    path = store.path_to(leaf_id)
    kept = [n for n in path if n.type != "label"]
    # A dropped label maps to the next kept entry (for firstKeptEntryId remapping).
    remap: dict[str, str] = {}
    waiting: list[str] = []
    for n in path:
        if n.type == "label":
            waiting.append(n.id)
        else:
            for label_id in waiting:
                remap[label_id] = n.id
            waiting = []
    parent_session = str(store.path) if store.path is not None else None
    header = new_header(store.cwd, parent_session)
    lines: list[bytes] = [codec.dumps_line(header)]
    entries: list[dict[str, Any]] = []
    previous: str | None = None
    used: set[str] = set()
    for n in kept:
        data = store.data(n)
        changed = data.get("parentId") != previous
        first_kept = data.get("firstKeptEntryId")
        if n.type == "compaction" and isinstance(first_kept, str) and first_kept in remap:
            changed = True
        if changed:
            data = {**data, "parentId": previous}
            if n.type == "compaction" and first_kept in remap:
                data["firstKeptEntryId"] = remap[str(first_kept)]
            lines.append(codec.dumps_line(data))
        else:
            lines.append(store.raw_line(n) + b"\n")
        entries.append(data)
        used.add(n.id)
        previous = n.id
    kept_ids = {n.id for n in kept}
    label_times = store.label_times
    for target, label in store.labels.items():
        if target not in kept_ids:
            continue
        label_id = new_entry_id(used)
        entry = {
            "type": "label",
            "id": label_id,
            "parentId": previous,
            "timestamp": label_times.get(target),
            "targetId": target,
            "label": label,
        }
        used.add(label_id)
        lines.append(codec.dumps_line(entry))
        entries.append(entry)
        previous = label_id

    if store.path is None:
        new = SessionStore(header, path=None, folder=None)
        new.append_entries(entries)
        return new
    target_folder = folder or store.folder or store.path.parent
    new_path = target_folder / session_file_name(header)
    has_conversation = any(n.type == "message" and n.role in CONVERSATION_ROLES for n in kept)
    if has_conversation:
        create_exclusive(new_path, b"".join(lines))
        return SessionStore.open(new_path, folder=target_folder)
    new = SessionStore(header, path=new_path, folder=target_folder)
    new.append_entries(entries, lines[1:])
    return new


def fork(
    store: SessionStore, user_entry_id: str, folder: Path | None = None
) -> tuple[SessionStore, str]:
    """Fork before a user message: returns the new session and the message's text for the editor.

    A root user message gives an empty new session whose ``parentSession`` is this file.
    """
    node = store.node(user_entry_id)
    if node.type != "message" or node.role != "user":
        raise SessionError("Invalid entry ID for forking: only user messages can be forked.")
    _check_saved(store)
    text = message_text(store.data(node).get("message"), "")
    parent = node.parent
    while parent is not None and parent.hidden:
        parent = parent.parent
    if parent is None:
        target_folder = folder or store.folder
        parent_session = str(store.path) if store.path is not None else None
        if target_folder is None:
            return SessionStore.in_memory(store.cwd), text
        return SessionStore.create(target_folder, store.cwd, parent_session=parent_session), text
    return create_branched_session(store, parent.id, folder), text


def clone(store: SessionStore, folder: Path | None = None) -> SessionStore:
    """Copy the active branch up to the leaf into a new session."""
    if store.leaf is None:
        raise SessionError("Nothing to clone yet.")
    _check_saved(store)
    return create_branched_session(store, store.leaf.id, folder)


def fork_from(store: SessionStore, cwd: str, folder: Path) -> SessionStore:
    """A copy of the whole session (every branch, byte for byte) as a new session working in
    ``cwd``, in ``folder`` (pi 1.6's ``forkFrom``: new id, ``parentSession`` is this file; the
    original is left as it is). The copy opens at this store's leaf."""
    if store.path is None or not store.persisted:
        raise SessionError("This session has not been saved yet, so there is nothing to fork.")
    header = new_header(cwd, str(store.path.absolute()))
    lines = [codec.dumps_line(header)]
    lines.extend(store.raw_line(n) + b"\n" for n in store.all_nodes())
    new_path = folder / session_file_name(header)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    create_exclusive(new_path, b"".join(lines))
    new = SessionStore.open(new_path, folder=folder)
    leaf = store.leaf_id
    if leaf is not None and leaf in new and new.leaf_id != leaf:
        new.branch(leaf)
    return new
