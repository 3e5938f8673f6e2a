"""Helpers shared by the test files (no tests here): fault planting, fake models and apps, CLI runners.

pytest puts tests/ on sys.path, so a test imports them as `from support.store import run_events`.
"""
