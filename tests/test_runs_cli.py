"""`appliance runs list/show/export/stats/rm` on a real database, as a person would use them."""

from __future__ import annotations

import getpass
import json
import pwd
import re
import socket
import time
from pathlib import Path

import pytest

from appliance.agent import events as ev
from appliance.cli import main
from appliance.store import open_store
from appliance.store.anonymize import Identity, Masker
from support.store import MODEL, SETTINGS, assert_one_line_error, cli, record_all, run_events

HOST = socket.gethostname()
USER = getpass.getuser()
HOME = str(Path.home())
OTHER_USERS = sorted({p.pw_name for p in pwd.getpwall() if p.pw_uid >= 1000 and p.pw_uid != 65534})


@pytest.fixture
def db(tmp_path) -> Path:
    path = tmp_path / "runs.db"
    store = open_store(path)
    old = time.time() - 30 * 86400
    record_all(store, run_events("aaaa1111", 2, question="why is the fan loud?", start=old))
    record_all(store, run_events("aaaa2222", 3, question="what fills /var?", answer="journal logs",
                                 observation="/var/log/journal 9.1G", status=ev.MAX_STEPS))
    store.record(run_events("bbbb3333", 0, question="still going", end=False)[0])
    store.close()
    return path


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_shows_newest_first_and_filters(db, capsys):
    code, out, _ = run_cli(capsys, "runs", "list", "--db", str(db))
    lines = out.strip().splitlines()
    assert code == 0 and lines[0].split()[:3] == ["ID", "STARTED", "(UTC)"]
    assert [line.split()[0] for line in lines[1:]] == ["bbbb3333", "aaaa2222", "aaaa1111"]
    # the person-facing table shows status, steps and the question
    assert re.search(r"aaaa2222 .* max_steps +3 +smollm2-135m +what fills /var\?", out)
    code, out, _ = run_cli(capsys, "runs", "list", "--search", "journal", "--json", "--db", str(db))
    assert code == 0 and [r["id"] for r in json.loads(out)] == ["aaaa2222"]
    code, out, _ = run_cli(capsys, "--db", str(db), "runs", "list", "--status", "running", "--json")
    assert [r["id"] for r in json.loads(out)] == ["bbbb3333"]
    code, out, _ = run_cli(capsys, "runs", "list", "--limit", "1", "--json", "--db", str(db))
    assert [r["id"] for r in json.loads(out)] == ["bbbb3333"]
    code, out, _ = run_cli(capsys, "runs", "list", "--search", "nothing-like-this", "--db", str(db))
    assert code == 0 and "no runs match" in out


def test_list_before_anything_was_recorded(tmp_path, capsys):
    code, out, _ = run_cli(capsys, "runs", "list", "--db", str(tmp_path / "none.db"))
    assert code == 0 and "no runs recorded yet" in out
    code, out, _ = run_cli(capsys, "runs", "list", "--json", "--db", str(tmp_path / "none.db"))
    assert json.loads(out) == []
    assert not (tmp_path / "none.db").exists()  # reading never creates the file


def test_database_path_comes_from_appliance_home(tmp_path, db):
    home = tmp_path / "home"
    home.mkdir()
    db.rename(home / "appliance.db")
    proc = cli("runs", "list", "--json", env={"APPLIANCE_HOME": str(home)})
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads(proc.stdout)) == 3


def test_show_prints_the_whole_trajectory_step_by_step(db, capsys):
    code, out, _ = run_cli(capsys, "runs", "show", "aaaa2", "--db", str(db))
    assert code == 0
    assert out.startswith("Run aaaa2222 · max_steps · 3 steps")
    assert "Question: what fills /var?" in out and MODEL.sha256[:16] in out
    positions = [out.index(f"── Step {n}") for n in range(3)]
    assert positions == sorted(positions)
    for n in range(3):
        block = out[positions[n]: positions[n + 1] if n < 2 else len(out)]
        assert f"Thought: thought {n} of aaaa2222" in block
        assert f'Action: top_processes {{"sort_by": "cpu", "n": {5 + n}}}' in block
        assert f"Observation [ok] (4 ms): /var/log/journal 9.1G (step {n})" in block
        assert "threads 1/2" in block
    assert "Reflection: reason=checking" in out
    assert "Answer: journal logs" in out and '"process": "hogzilla"' in out and "- pid=4711" in out
    code, out, _ = run_cli(capsys, "runs", "show", "aaaa2222", "--json", "--db", str(db))
    data = json.loads(out)
    assert [s["step"] for s in data["steps"]] == [0, 1, 2] and data["settings"] == SETTINGS


def test_show_raw_adds_the_cited_facts_as_the_tool_returned_them(tmp_path, capsys):
    path = tmp_path / "runs.db"
    events = run_events("cccc4444", 2, observation="F1 pid=4711 name=hogzilla cpu_percent=98.5\nF2 pid=1 name=init")
    final = next(i for i, e in enumerate(events) if isinstance(e, ev.FinalAnswer))
    events[final] = ev.FinalAnswer("cccc4444", 2, "hogzilla uses the CPU", {"stance": "culprit", "cites": ["F1"]},
                                   ("hogzilla (pid 4711): 98.5 % CPU",))
    events[-1] = ev.RunEnded("cccc4444", ev.FINISHED, "hogzilla uses the CPU", {"stance": "culprit", "cites": ["F1"]},
                             "", 2, 201, 50, 40, 3.5, time.time())
    store = open_store(path)
    record_all(store, events)
    store.close()
    code, plain, _ = run_cli(capsys, "runs", "show", "cccc4444", "--db", str(path))
    assert code == 0 and "Evidence: - hogzilla (pid 4711): 98.5 % CPU" in plain and "Evidence as read" not in plain
    code, raw, _ = run_cli(capsys, "runs", "show", "cccc4444", "--raw", "--db", str(path))
    assert code == 0 and "Evidence as read: F1 pid=4711 name=hogzilla cpu_percent=98.5" in raw
    assert "F2 pid=1" not in raw.split("Evidence as read")[1]  # only what the answer cites


def test_bad_ids_and_dates_give_one_line_and_exit_2(db, capsys):
    code, _, err = run_cli(capsys, "runs", "show", "aaaa", "--db", str(db))
    assert code == 2 and "matches several runs" in err and len(err.strip().splitlines()) == 1
    code, _, err = run_cli(capsys, "runs", "show", "zzzz", "--db", str(db))
    assert code == 2 and "no run with an id starting 'zzzz'" in err
    code, _, err = run_cli(capsys, "runs", "rm", "--before", "last tuesday", "--db", str(db))
    assert code == 2 and "not a date" in err
    proc = cli("runs", "show", "nope", "--db", str(db))
    assert_one_line_error(proc, "no run with an id starting")


def test_export_one_and_all_as_jsonl_and_json(db, tmp_path, capsys):
    code, out, _ = run_cli(capsys, "runs", "export", "aaaa1", "--db", str(db))
    (record,) = [json.loads(line) for line in out.splitlines()]
    assert record["id"] == "aaaa1111" and len(record["steps"]) == 2 and record["model_sha256"] == MODEL.sha256
    target = tmp_path / "all.json"
    code, _, err = run_cli(capsys, "runs", "export", "--all", "--format", "json", "-o", str(target), "--db", str(db))
    assert code == 0 and "exported 3 runs" in err
    document = json.loads(target.read_text())
    assert document["format"] == "appliance-runs" and document["anonymized"] is False
    assert [r["id"] for r in document["runs"]] == ["aaaa1111", "aaaa2222", "bbbb3333"]  # oldest first
    assert [len(r["steps"]) for r in document["runs"]] == [2, 3, 0]


def identifying_run(run_id: str) -> list:
    """A run whose text is full of what identifies this machine and its people."""
    people = " ".join(OTHER_USERS[:5])
    text = (f"host {HOST} ({HOST.upper()}) user {USER} home {HOME}/projects/app.log; "
            f"ssh from 192.168.7.23 and 2001:db8::7 to 10.0.0.5; again 192.168.7.23; "
            f"local 127.0.0.1 fine; other accounts: {people}; /home/carol/notes.txt by carol")
    events = run_events(run_id, 2, question=f"why is {HOST} slow for {USER}?", answer=f"{HOME}/big is 9G",
                        observation=text)
    started = events[0]
    events[0] = ev.RunStarted(run_id, started.question,
                              type(MODEL)(MODEL.name, f"{HOME}/models/m.gguf", MODEL.size, MODEL.sha256, 4096),
                              started.settings, started.started_at, started.version)
    return events


def test_export_anonymize_hides_host_users_home_and_addresses_consistently(tmp_path, capsys):
    path = tmp_path / "runs.db"
    store = open_store(path)
    record_all(store, identifying_run("ident-1"))
    record_all(store, identifying_run("ident-2"))
    store.close()

    code, plain, _ = run_cli(capsys, "runs", "export", "--all", "--db", str(path))
    assert HOST in plain and HOME in plain and "192.168.7.23" in plain  # the test data does identify

    code, out, _ = run_cli(capsys, "runs", "export", "--all", "--anonymize", "--db", str(path))
    assert code == 0
    for name in [HOST, HOST.split(".")[0], USER, "carol", *OTHER_USERS]:
        assert not re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", out, re.I if name.startswith(HOST) else 0), name
    assert HOME not in out and "/home/carol" not in out
    for address in ("192.168.7.23", "2001:db8::7", "10.0.0.5"):
        assert address not in out
    records = [json.loads(line) for line in out.splitlines()]
    # kept: the model's hash, the sampler settings, ids, numbers, loopback
    assert all(r["model_sha256"] == MODEL.sha256 and r["settings"] == SETTINGS for r in records)
    assert [r["id"] for r in records] == ["ident-1", "ident-2"] and "127.0.0.1" in out
    assert records[0]["steps"][1]["action_input"] == {"sort_by": "cpu", "n": 6}
    # consistent: the same value has the same mask everywhere, different values differ
    obs = [s["observation"] for r in records for s in r["steps"]]
    assert len({re.sub(r"\(step \d\)", "", o) for o in obs}) == 1
    first = obs[0]
    ips = re.findall(r"ip-\d+", first)
    assert ips[0] == ips[3] and len({ips[0], ips[1], ips[2]}) == 3
    host_mask = re.search(r"host (host-\d+)", first).group(1)
    assert host_mask in records[1]["question"]
    assert records[0]["model_path"].startswith("/home/user-") and records[0]["answer"].startswith("/home/user-")


def test_masker_knows_home_paths_of_people_it_was_not_told_about():
    masker = Masker(Identity(hostnames=("db7",), users=("ops",), homes=("/home/ops",)))
    row = {"observation": "dave logged in; /home/dave/.bashrc changed; ops and db7 and db70 and vmstat"}
    masker.learn(row)
    text = masker.row(row)["observation"]
    assert "dave" not in text and "ops " not in text and " db7 " not in text
    assert "db70" in text and "vmstat" in text  # whole words only


def test_stats_per_model(db, capsys):
    code, out, _ = run_cli(capsys, "runs", "stats", "--db", str(db))
    lines = out.strip().splitlines()
    assert code == 0 and lines[0].split()[:3] == ["MODEL", "RUNS", "FINISHED"]
    assert re.match(r"smollm2-135m +3 +33% +1\.7 ", lines[1]), lines[1]  # 1 of 3 finished; steps 2, 3, 0
    code, out, _ = run_cli(capsys, "runs", "stats", "--json", "--db", str(db))
    (row,) = json.loads(out)
    assert row["runs"] == 3 and row["tokens_per_second"] == pytest.approx(50.0)


def test_rm_by_id_and_before_a_date(db, capsys):
    code, out, _ = run_cli(capsys, "runs", "rm", "aaaa2", "--db", str(db))
    assert code == 0 and "removed run aaaa2222" in out
    cutoff = time.strftime("%Y-%m-%d", time.gmtime(time.time() - 86400))
    code, out, _ = run_cli(capsys, "runs", "rm", "--before", cutoff, "--db", str(db))
    assert code == 0 and "removed 1 run " in out
    code, out, _ = run_cli(capsys, "runs", "list", "--json", "--db", str(db))
    assert [r["id"] for r in json.loads(out)] == ["bbbb3333"]


def test_rm_needs_an_id_or_a_date(db):
    proc = cli("runs", "rm", "--db", str(db))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
