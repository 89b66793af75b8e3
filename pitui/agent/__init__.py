"""The agent: the tools the model can call, and (later) the loop that drives a conversation."""
