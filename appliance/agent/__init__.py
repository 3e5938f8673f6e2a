"""The ReAct engine: a generator of frozen event values. No UI, no printing."""
