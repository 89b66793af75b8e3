"""The litellm adapter: model info, provider keys, message conversion, streaming, errors.

litellm is imported lazily (see :mod:`pitui.llm.lazy`); nothing here imports it at module level,
so the TUI's first frame never waits for it.
"""
