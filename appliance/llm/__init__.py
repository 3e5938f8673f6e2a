"""Models: the catalog, GGUF checks, loading through llama.cpp, constrained decoding, and models
served by an OpenAI-compatible server (remotes.py, http_client.py, remote_model.py).

`llama_cpp` is imported lazily inside the functions that need it, so the rest of the appliance
imports, runs its tests and prints its errors without it.
"""
