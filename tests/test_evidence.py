"""Evidence before the first step: verdicts shown, named places looked at, answers held to them."""

import json
import os

import pytest

from appliance.agent.question.kinds import Asks, Resource

from appliance.agent import events as ev
from appliance.agent.engine import Engine
from appliance.agent.evidence import MAX_SHOWN, Evidence, Look, MachineEvidence, named_paths, plan_look
from appliance.agent.settings import EngineSettings
from appliance.analyzers.base import CRITICAL, OK, WARNING, Finding
from appliance.llm.fake import ScriptedModel
from support.claims import claim
from appliance.tools.registry import ToolContext, build_registry
from appliance.tools.paths import PathPolicy

CPU_OK = Finding("cpu", OK, "no CPU hog: the busiest process, kdamond, uses 2 % of one core; load 0.3 on 2 cores")
MEM_OK = Finding("memory", OK, "no memory pressure: 81 % available; top consumer postgres 3 %")
DISK_OK = Finding("filesystem_full", OK, "no filesystem is full: the fullest, / is 22.5 % used (78.6 GiB free)")
ZOMBIES = Finding("zombies", WARNING, "7 zombie processes, all children of reaper (pid 4242)",
                  {"zombies": 7}, culprit="reaper", pid=4242)


class FixedEvidence:
    def __init__(self, evidence: Evidence) -> None:
        self.evidence = evidence

    def gather(self, question, self_pids):
        return self.evidence


def call(action, **action_input):
    return {"thought": "next", "action": action, "action_input": action_input}


def finish(answer, stance="problem", cites=None, value="", **result):
    """A finish as a claim citing the facts that hold what it states (support.claims)."""
    process, pid = result.get("process"), result.get("pid")
    return claim(answer, stance, subject=f"{process} (pid {pid})" if process and pid else "", cites=cites, value=value)


def run(replies, evidence, question, settings=EngineSettings(max_steps=4)):
    model = ScriptedModel(replies)
    registry = build_registry(ToolContext(policy=PathPolicy.default()))
    engine = Engine(model, registry, settings, snapshot=lambda pids: {"load": {"1m": 0.3}},
                    evidence=FixedEvidence(evidence))
    events = list(engine.run(question))
    return events, model


def test_named_paths_in_a_question():
    assert named_paths("why does the app in /opt/billing/ fail? see /var/log/app.log.") == [
        "/opt/billing/", "/var/log/app.log"]
    assert named_paths("is / full?") == []


def test_plan_look_reads_logs_measures_folders_opens_files():
    assert plan_look("/var/log/app.log", None) == [("read_log", {"path": "/var/log/app.log", "lines": 12})]
    assert plan_look("/etc/app.conf", None)[0][0] == "read_file"
    listing = {"path": "/srv/app/logs", "entries": [
        {"name": "old.log", "type": "file", "modified": "2024-01-01 00:00:00"},
        {"name": "new.log", "type": "file", "modified": "2024-05-01 00:00:00"},
        {"name": "x.log", "type": "file", "off_limits": True, "modified": "2025-01-01 00:00:00"}]}
    assert [a["path"] for _, a in plan_look("/srv/app/logs", listing)] == ["/srv/app/logs/new.log", "/srv/app/logs/old.log"]
    assert plan_look("/data", {"path": "/data", "entries": [{"name": "a.bin", "type": "file"}]})[0][0] == "dir_sizes"


def test_every_problem_and_the_topic_verdicts_are_shown_before_the_first_step():
    evidence = Evidence((CPU_OK, MEM_OK, DISK_OK, ZOMBIES), ("cpu",))
    events, model = run([finish("reaper (pid 4242) holds 7 zombies.", process="reaper", pid=4242)], evidence,
                        "is anything hogging the cpu?")
    first = model.calls[0][0][-1].content
    assert "[warning] zombies: 7 zombie processes" in first and "[ok] cpu: no CPU hog" in first
    assert "memory" not in first.split("Question:")[1].split("snapshot")[0]
    assert events[-1].status == "finished"  # the verdicts may answer at step 1


def test_an_all_clear_over_a_critical_goes_back_narrowed_and_a_claim_that_never_holds_is_not_settled():
    evidence = Evidence((CPU_OK, DISK_OK, Finding("filesystem_full", CRITICAL, "/mnt/x is 100 % full: 0 B free",
                                                   culprit="/mnt/x", path="/mnt/x")), ("filesystem_full",))
    wrong = finish("Nothing is wrong: no filesystem is full.", "no_problem", cites=["F2"])
    unbacked = finish("/mnt/x has 7 GiB left.", "problem", cites=["F1"])
    events, model = run([wrong, unbacked, unbacked, unbacked], evidence, "is my disk full?")  # one is read as a reflection
    rejected = [e for e in events if isinstance(e, ev.AnswerRejected)]
    assert len(rejected) == 2 and "F1 shows a problem about what was asked" in rejected[0].reason
    assert "the answer states 7 GiB" in rejected[1].reason
    retry = model.calls[1][1]["anyOf"] if "anyOf" in model.calls[1][1] else [model.calls[1][1]]
    claim_schema = next(o for o in retry if o["properties"]["action"]["const"] == "finish")["properties"]["action_input"]
    assert "no_problem" not in claim_schema["properties"]["stance"]["enum"]  # the retry may not choose it again
    assert claim_schema["properties"]["cites"]["items"]["enum"] == ["F1"]
    final = [e for e in events if isinstance(e, ev.FinalAnswer)][-1]
    assert final.forced and final.answer.startswith("I could not settle") and "/mnt/x is 100 % full" in final.answer
    assert "/mnt/x is 100 % full: 0 B free" in final.evidence


def test_a_fault_claim_against_an_ok_verdict_is_sent_back_and_a_fixed_answer_passes():
    evidence = Evidence((CPU_OK, DISK_OK), ("filesystem_full",))
    events, _ = run([finish("The disk is full, with 22.5% used and 78.6 GiB free."),
                     finish("No filesystem is full: / is 22.5% used with 78.6 GiB free.", "no_problem")],
                    evidence, "is my disk full?")
    rejected = [e for e in events if isinstance(e, ev.AnswerRejected)]
    assert rejected and "no fact shown is a problem" in rejected[0].reason
    assert events[-1].status == "finished" and not [e for e in events if isinstance(e, ev.FinalAnswer)][-1].forced


def test_a_named_log_folder_is_read_before_the_first_step(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "old.log").write_text("2024-05-14 02:00:00 INFO started\n")
    (logs / "app.log").write_text("".join(f"2024-05-14 02:00:{i:02d} INFO tick {i}\n" for i in range(40))
                                  + "2024-05-14 02:01:00 ERROR upload failed: quota exceeded (507)\n")
    os.utime(logs / "old.log", (1_600_000_000, 1_600_000_000))
    registry = build_registry(ToolContext(policy=PathPolicy.default([tmp_path])))
    evidence = MachineEvidence(registry, analyzers=()).gather(f"why does my app in {logs} fail?", frozenset())
    assert [look.tool for look in evidence.looks] == ["read_log", "read_log", "inspect_path"]  # then its profile
    assert evidence.looks[0].arguments["path"].endswith("app.log")
    assert "quota exceeded" in json.dumps(evidence.looks[0].result)


def test_a_named_folder_is_measured_and_a_denied_place_stays_denied(tmp_path):
    (tmp_path / "big").mkdir()
    (tmp_path / "big" / "blob.bin").write_bytes(b"x" * 300_000)
    (tmp_path / "small").mkdir()
    registry = build_registry(ToolContext(policy=PathPolicy.default([tmp_path])))
    looks = MachineEvidence(registry, analyzers=()).gather(f"what fills {tmp_path}?", frozenset()).looks
    assert looks[0].tool == "dir_sizes" and "big" in looks[0].result["data"]["headline"]
    denied = MachineEvidence(registry, analyzers=()).gather("what is in /root/.ssh/id_rsa?", frozenset()).looks
    assert denied and denied[0].result["status"] in ("denied", "error")


def test_on_a_machine_with_many_other_problems_the_verdict_asked_about_is_still_shown():
    """Past MAX_SHOWN the problems the question does not ask about give way: the port's own (ok)
    verdict is the answer to "which process listens on port 8080?"."""
    port = Finding("listening", OK, "tcp port 8080 is listened on by nginx (pid 77) on 0.0.0.0")
    noise = [Finding("filesystem_full", CRITICAL, f"/mnt/f{i} is 100 % full: 0 B free", culprit=f"/mnt/f{i}",
                     path=f"/mnt/f{i}") for i in range(MAX_SHOWN + 2)]
    evidence = Evidence((CPU_OK, *noise, port), ("listening",))
    shown = evidence.shown()
    assert port in shown and len(shown) == MAX_SHOWN
    assert shown[:-1] == noise[:MAX_SHOWN - 1] and shown[-1] == port  # problems first, as ever
    few = Evidence((CPU_OK, *noise[:2], port), ("listening",))
    assert few.shown() == [*noise[:2], port]  # under the bound nothing gives way


def test_the_problems_of_the_question_come_first_and_only_they_must_be_named():
    cpu_hot = Finding("cpu", CRITICAL, "CPU saturated: load 9 on 2 cores; busiest python (pid 99)", culprit="python", pid=99)
    evidence = Evidence((cpu_hot, ZOMBIES, CPU_OK), ("zombies",))
    assert [f.family for f in evidence.shown()][:2] == ["zombies", "cpu"]
    assert evidence.main_problems() == [ZOMBIES]
    events, _ = run([finish("python (pid 99) is busy.", process="python", pid=99, cites=["F2"]),
                     finish("reaper (pid 4242) holds the zombies.", process="reaper", pid=4242)],
                    evidence, "There are zombie processes. Which process is their parent?")
    rejected = [e for e in events if isinstance(e, ev.AnswerRejected)]
    assert rejected and "shows a problem about what was asked" in rejected[0].reason  # the zombies' verdict
    assert events[-1].status == "finished" and "reaper" in events[-1].answer


def test_a_named_place_gets_the_verdicts_of_its_own_filesystem(tmp_path):
    import subprocess

    mount = tmp_path / "uploads"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)]).returncode != 0:
        pytest.fail("!!! could not mount a tmpfs (needs root)")
    try:
        (mount / "blob").write_bytes(b"x" * ((4 << 20) - 8192))
        registry = build_registry(ToolContext(policy=PathPolicy.default([tmp_path])))
        evidence = MachineEvidence(registry).gather(f"is {mount} about to fill up?", frozenset())
        first = evidence.shown()[0]
        assert first.family == "filesystem_full" and first.values["mount"] == str(mount)
        assert first.is_problem and first.culprit == str(mount)
    finally:
        subprocess.run(["umount", str(mount)])


def test_a_storage_question_measures_a_folder_of_logs_and_a_tools_error_is_no_log_line():
    from appliance.agent.run_memory import RunMemory

    listing = {"path": "/srv/spool", "entries": [{"name": "outbox.log", "type": "file", "modified": "2024"}]}
    assert plan_look("/srv/spool", listing)[0][0] == "read_log"
    assert plan_look("/srv/spool", listing, storage=True) == [("dir_sizes", {"path": "/srv/spool", "depth": 1, "top": 8})]
    memory = RunMemory()
    memory.remember_log("error", "error: /srv/spool/outbox.log is a binary file; for the systemd journal use unit")
    memory.remember_log("ok", "lines:\n  2024-05-14 ERROR upload failed: quota exceeded")
    assert memory.log_bodies == ["lines:\n  2024-05-14 ERROR upload failed: quota exceeded"]


def test_a_space_question_naming_no_place_measures_the_fullest_filesystem(tmp_path):
    """"what is filling my disk?" names no folder: the fullest filesystem's largest folders and files
    are in front of the model before its first step; a question naming a place, or about something
    else, gets no such look."""
    import subprocess

    from appliance.agent.question.question import read_question

    mount = tmp_path / "scratch"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mount)]).returncode != 0:
        pytest.fail("!!! could not mount a tmpfs (needs root)")
    try:
        (mount / "renders").mkdir()
        (mount / "notes").mkdir()
        (mount / "notes" / "a.txt").write_bytes(b"n" * 4096)
        with open(mount / "renders" / "frame.bin", "wb", buffering=0) as out:
            try:
                for _ in range(8):
                    out.write(os.urandom(1 << 20))
            except OSError:
                pass  # full: the point
        registry = build_registry(ToolContext(policy=PathPolicy.default([tmp_path])))
        source = MachineEvidence(registry)
        asked = read_question("what is filling my disk?").relabelled(Asks.FOLDER, Resource.DISK_SPACE, True)
        evidence = source.gather(asked, frozenset())
        assert [(look.tool, look.path) for look in evidence.looks] == [("dir_sizes", str(mount)),
                                                                       ("largest_files", str(mount))]
        sizes = evidence.looks[0].result["data"]
        assert sizes["largest"][0]["path"] == str(mount / "renders"), sizes
        assert any(f.family == "disk_usage" and f.culprit == "renders" for f in evidence.places)
        assert evidence.looks[1].result["data"]["files"] == [] or \
            evidence.looks[1].result["data"]["files"][0]["path"] == str(mount / "renders" / "frame.bin")
        biggest = read_question("which file is the biggest one on this disk?").relabelled(Asks.FILE, Resource.DISK_SPACE, False)
        assert [look.tool for look in source.gather(biggest, frozenset()).looks] == ["largest_files"]
        named = source.gather(read_question(f"which folder under {mount} takes the most space?"), frozenset())
        assert [look.tool for look in named.looks] == ["dir_sizes", "inspect_path"]  # measured, then profiled
        assert all(look.path == str(mount) for look in named.looks)
        assert source.gather(read_question("is port 22 free?"), frozenset()).looks == ()
    finally:
        subprocess.run(["umount", str(mount)])


def test_a_plain_fact_or_a_users_share_is_measured_before_the_first_step():
    """A question of a kind no analyzer judges gets the reading that answers it (the system overview,
    the users' totals) beside the verdicts, as a reading about no place; other kinds, and a user
    question about a folder it names, get none."""
    import platform

    from appliance.agent.question.question import read_question

    source = MachineEvidence(build_registry(ToolContext(policy=PathPolicy.default())))
    fact = source.gather(read_question("what kernel version is this machine running?").relabelled(
        Asks.SYSTEM_FACT, Resource.NONE, False), frozenset())
    assert [look.tool for look in fact.measured] == ["system_overview"] and fact.looks == ()
    assert fact.measured[0].result["data"]["kernel"] == platform.release()
    user = source.gather(read_question("which user uses the most memory?"), frozenset())
    assert [look.tool for look in user.measured] == ["user_totals"]
    assert {row["user"] for row in user.measured[0].result["data"]["users"]}
    assert source.gather(read_question("which user owns /srv/shared?"), frozenset()).measured == ()
    assert source.gather(read_question("is port 22 free?"), frozenset()).measured == ()
    assert source.question_key(read_question("what kernel version is this?")) != \
        source.question_key(read_question("why is my laptop slow?"))


def test_the_first_step_shows_the_measured_fact():
    """The model reads the overview before its first step (and the engine's own answer can name it)."""
    from appliance.agent.question.question import read_question

    data = {"os": "Plan 9 from Bell Labs", "kernel": "9.9.9-test", "hostname": "probe-host"}
    evidence = Evidence(measured=(Look("this machine", "system_overview", {}, {"status": "ok", "data": data,
                                                                           "error": None}),))
    question = read_question("which kernel does this box run?")
    events, model = run([finish("It runs kernel 9.9.9-test.", "value", value="9.9.9-test")], evidence, question.text)
    assert "9.9.9-test" in model.calls[0][0][-1].content
    assert events[-1].status == "finished" and "9.9.9-test" in events[-1].answer
    final = [e for e in events if isinstance(e, ev.FinalAnswer)][-1]
    assert any("kernel 9.9.9-test" in line and "=" not in line for line in final.evidence)  # in plain words


def test_a_complaint_whose_part_shows_nothing_wrong_is_led_by_what_is_wrong_now():
    """The words' guess of the part can be wrong ("the process list is full of …" read as the disk):
    a complaint asking for a culprit or an explanation, with nothing wrong in the part guessed, is
    about what the checks find wrong now; a past event never leads, and a question that is not a
    complaint, a yes/no question, or one naming a place keeps its own part."""
    from appliance.agent.evidence import with_current_problems
    from appliance.agent.question.question import read_question

    copies = Finding("process_names", WARNING, "72 processes named render, all started by queue (pid 77)",
                     culprit="queue", pid=77)
    oom = Finding("oom", WARNING, "the kernel OOM-killed victim (pid 5) 40 min ago", culprit="victim", pid=5)
    disk_fine = Finding("filesystem_full", OK, "no filesystem is full")
    findings = [oom, disk_fine, copies]
    topics = ("filesystem_full", "inodes")
    complaint = read_question("the process list is full of the same program over and over. what keeps launching them?")
    assert with_current_problems(complaint, topics, findings, []) == ("process_names", *topics)
    for text in ("Which process uses the most memory?",  # no fault reported
                 "is the disk full?",  # yes/no about its own part
                 "my disk at /srv/media is full, what is filling it?"):  # a named place
        question = read_question(text)
        assert with_current_problems(question, topics, findings, []) == topics, text
    disk_full = Finding("filesystem_full", WARNING, "/ is 97 % full", culprit="/")
    assert with_current_problems(complaint, topics, [disk_full, copies], []) == topics  # its own part is wrong
    assert with_current_problems(complaint, topics, [oom, disk_fine], []) == topics  # only a past event


def test_a_yes_no_complaint_is_led_by_a_problem_of_its_own_part_only():
    """"is something limiting my job? the processor is idle": the CPU quota's warning belongs to the
    CPU part its words name, and leads; a problem of another part (a full disk) does not lead a
    yes/no question, though it leads an open complaint."""
    from appliance.agent.evidence import with_current_problems
    from appliance.agent.question.question import read_question

    throttled = Finding("cgroup_limits", WARNING, "control group /batch is throttled by its CPU quota: job (pid 7)",
                        culprit="job", pid=7)
    disk_full = Finding("filesystem_full", WARNING, "/ is 97 % full", culprit="/")
    cpu_fine = Finding("cpu", OK, "no CPU hog")
    question = read_question("a job here runs painfully slowly even though the processor is mostly idle. "
                             "is something limiting it?").relabelled(Asks.YES_NO, Resource.CPU, True)
    assert question.resource.value == "cpu" and question.fault
    assert with_current_problems(question, ("cpu",), [cpu_fine, throttled], [])[0] == "cgroup_limits"
    assert with_current_problems(question, ("cpu",), [cpu_fine, disk_full], []) == ("cpu",)

