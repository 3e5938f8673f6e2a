"""Models: the catalog, GGUF checks, loading through llama.cpp, and constrained decoding.

`llama_cpp` is imported lazily inside the functions that need it, so the rest of the appliance
imports, runs its tests and prints its errors without it.
"""
