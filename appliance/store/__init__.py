"""The trajectory store: every run and step in one SQLite file (see docs/store.md).

    store = open_store(paths.db)          # writer: migrates, recovers after a crash
    recorder = SafeRecorder(store)        # or open_recorder(paths.db): never raises
    for event in engine.run(question):
        recorder.record(event)
    if recorder.failure: print("the run could not be recorded:", recorder.failure)

    history = open_store(paths.db, readonly=True)   # readers never block the writer
    history.list_runs(limit=20, search="disk full"); history.get_run("3f2a")   # RunRecords
"""

from appliance.errors import StoreError
from appliance.store.evals import EvalCaseRecord, EvalRecord
from appliance.store.recorder import SafeRecorder, open_recorder
from appliance.store.records import ModelStats, ReflectionRecord, RunRecord, StepRecord
from appliance.store.store import DEFAULT_MAX_BYTES, OBSERVATION_CAP, Store, open_store

__all__ = ["DEFAULT_MAX_BYTES", "OBSERVATION_CAP", "EvalCaseRecord", "EvalRecord", "ModelStats", "ReflectionRecord",
           "RunRecord", "SafeRecorder", "StepRecord", "Store", "StoreError", "open_recorder", "open_store"]
