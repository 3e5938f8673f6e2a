"""The answer path: the rules an answer must pass (rules, over the checks, agreement, fit and ports
predicates), why one was sent back (misfit), what its retry must do (steer), and the engine's own
answer when none holds (assemble)."""
