"""The provider layer: model info, routes and keys, the request's content, the four wire APIs
pitui speaks itself (:mod:`pitui.llm.apis`, over httpx), litellm's route for the rest
(:mod:`pitui.llm.fallback`), streaming and errors.

Nothing here imports httpx or litellm at module level: the API modules are imported in a
thread after the first frame (:mod:`pitui.llm.preload`), litellm only when a model outside
the four APIs is used (:mod:`pitui.llm.lazy`).
"""
