"""JSON-schema keywords of our own that the grammar compiler understands.

Kept apart from appliance.llm.grammar (which loads llama.cpp) so the agent can build schemas with
them without importing the model runtime.
"""

# A string schema with `"x-starts-with": [...]` admits only strings that begin with one of them.
STARTS_WITH = "x-starts-with"
