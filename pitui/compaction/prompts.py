"""Prompts for the summarizer. Our own wording; the section headings follow pi's structured
summary so summaries written by either tool read the same."""

from __future__ import annotations

SYSTEM_PROMPT = (
    "You summarize conversations between a user and an AI coding assistant. Read the "
    "conversation you are given and write a structured summary in exactly the requested format. "
    "Do not continue the conversation and do not answer questions asked in it: output only the "
    "summary."
)

_SECTIONS = """## Goal
[What the user wants to achieve; several items if there are several goals.]

## Constraints & Preferences
- [Requirements, conventions and preferences the user stated, or "(none)"]

## Progress
### Done
- [x] [Finished work]

### In Progress
- [ ] [Work started but not finished]

### Blocked
- [What is blocked and why, or "(none)"]

## Key Decisions
- **[Decision]**: [why it was made]

## Next Steps
1. [What should happen next, in order]

## Critical Context
- [Data, examples, names and references needed to continue, or "(none)"]"""

INITIAL_PROMPT = (
    "The conversation above is to be summarized into a checkpoint that another model will use "
    "to carry on the work. Use this format exactly:\n\n"
    + _SECTIONS
    + "\n\nKeep each section short. Keep exact file paths, function names and error messages."
)

UPDATE_PROMPT = (
    "The conversation above holds NEW messages. Merge them into the summary given in "
    "<previous-summary>:\n"
    "- keep everything in the previous summary that still matters;\n"
    "- add new progress, decisions and context;\n"
    "- move items from In Progress to Done when they were finished; update Next Steps;\n"
    "- drop items that are no longer relevant;\n"
    "- keep exact file paths, function names and error messages.\n\n"
    "Use this format exactly (keep what was there, add what is new):\n\n" + _SECTIONS
)

TURN_PREFIX_PROMPT = """This is the first part of a turn that was too long to keep whole; the \
rest of the turn is kept verbatim after this summary. Summarize this first part so the kept \
part makes sense:

## Original Request
[What the user asked for in this turn]

## Progress So Far
- [What was done in this first part]

## Context Needed to Continue
- [Files, results and decisions the rest of the turn relies on]

Be brief."""

BRANCH_PROMPT = (
    "Summarize this branch of the conversation so it can be recalled when the user returns "
    "to it later. Use this format exactly:\n\n"
    + _SECTIONS.split("\n\n## Critical Context")[0]
    + "\n\nKeep each section short. Keep exact file paths, function names and error messages."
)

BRANCH_PREAMBLE = (
    "The user explored another branch of the conversation before coming back here.\n"
    "What happened on that branch:\n\n"
)
SPLIT_TURN_SEPARATOR = "\n\n---\n\n**Turn Context (split turn):**\n\n"
NO_PRIOR_HISTORY = "No prior history."
NO_BRANCH_CONTENT = "No content to summarize"


def summary_request(
    conversation: str, previous_summary: str | None, instructions: str | None
) -> str:
    """The one user message of a history summary request."""
    text = f"<conversation>\n{conversation}\n</conversation>\n\n"
    if previous_summary:
        text += f"<previous-summary>\n{previous_summary}\n</previous-summary>\n\n"
    text += UPDATE_PROMPT if previous_summary else INITIAL_PROMPT
    if instructions:
        text += f"\n\nAdditional focus: {instructions}"
    return text


def turn_prefix_request(conversation: str, instructions: str | None) -> str:
    text = f"# Conversation\n{conversation}\n\n# Instructions\n{TURN_PREFIX_PROMPT}"
    if instructions:
        text += f"\n\nAdditional focus: {instructions}"
    return text


def branch_request(conversation: str, instructions: str | None, replace: bool) -> str:
    text = f"<conversation>\n{conversation}\n</conversation>\n\n"
    if instructions and replace:
        return text + instructions
    text += BRANCH_PROMPT
    if instructions:
        text += f"\n\nAdditional focus: {instructions}"
    return text
