"""The question reader: what a question names exactly, its form where the structural words say it,
the families its topic words name, and the model's labels taking the rest. No model runs here (the
labelled set measures the real one: scripts/eval_questions.py)."""

from __future__ import annotations

import pytest


from appliance.agent.question.kinds import Asks, Resource
from appliance.agent.question.question import read_question


@pytest.mark.parametrize("text, holders, in_the_way", [
    ("before i pull out the disk at /mnt/usb: does any program still have something open on it?", True, True),
    ("can i disconnect /media/cam now?", True, True),
    ("which process has /var/lib/db/main.db open?", True, False),
    ("how big is /srv/data?", False, False),
    # what holds deleted files holds space, not the place: the deleted-files check answers it
    ("Is any deleted file still holding space on /srv/spool? If so, which process holds it?", False, False),
    ("which process holds /mnt/usb?", True, False),
    ("i deleted the logs but cant unmount /mnt/usb, target is busy", True, True),
])
def test_taking_a_disk_away_in_plain_words_asks_who_holds_it(text, holders, in_the_way):
    from appliance.analyzers.named_path import path_ask

    ask = path_ask(text)
    assert (ask.holders, ask.in_the_way) == (holders, in_the_way)


@pytest.mark.parametrize("text, user", [
    ("is there anything stopping www-data from reading /srv/reports/q2.csv?", "www-data"),
    ("can nobody open /srv/reports/q2.csv?", "nobody"),
    ("is www-data allowed to read /srv/reports/q2.csv?", "www-data"),
    ("is root able to access /srv/reports/q2.csv?", "root"),
    ("why can't i read /srv/reports/q2.csv", None),  # "i" is no account
    # the one denied, named as the subject or after "for"/"when"
    ("why does www-data get permission denied reading /srv/reports/q2.csv?", "www-data"),
    ("permission denied for www-data on /srv/reports/q2.csv, why", "www-data"),
    ("the export says permission denied when www-data opens /srv/reports/q2.csv", "www-data"),
    ("i get permission denied on /srv/reports/q2.csv", None),
    # an account named beside the path, the trouble in other words: its access is what is asked
    ("the web app running as www-data cant get at /srv/reports/q2.csv anymore, whats up", "www-data"),
    ("www-data keeps failing on /srv/reports/q2.csv, anything wrong there?", "www-data"),
    ("is /srv/reports/q2.csv ok for www-data?", "www-data"),
    # the account in trouble, or asked about, in plain words
    ("www-data has trouble with /srv/reports/q2.csv, can you look?", "www-data"),
    ("does www-data have access to /srv/reports/q2.csv", "www-data"),
    ("check the permissions for www-data on /srv/reports/q2.csv", "www-data"),
])
def test_a_question_about_access_in_other_words_asks_the_path_lookup_for_its_reader(text, user):
    from appliance.analyzers.named_path import path_ask

    ask = path_ask(text)
    assert ask.lookup and ask.denial
    assert ask.user == user


@pytest.mark.parametrize("text, grows", [
    # growth in the words people use: of the contents, or of free space falling
    ("which file in /srv/in keeps growing?", True),
    ("free space on /srv/in keeps shrinking, which log is ballooning?", True),
    ("my disk space under /srv/in keeps going down. what is eating it?", True),
    ("the spool at /srv/in is getting bigger every minute", True),
    ("does /srv/in keep getting fuller?", True),
    ("the log in /srv/in keeps getting fatter", True),
    # a size or a holder asked at one moment is no growth
    ("how big is /srv/in?", False),
    ("what is eating the space on /srv/in?", False),
    ("which process has /srv/in open?", False),
])
def test_growth_of_a_named_path_in_plain_words(text, grows):
    from appliance.analyzers.named_path import path_ask

    assert path_ask(text).grows is grows


@pytest.mark.parametrize("text, family", [
    # accounts and packets in the words people use
    ("which account is eating all the ram on this server?", "user_load"),
    ("whose processes are using the cpu?", "user_load"),
    ("are we dropping packets?", "network_errors"),
    ("is anything retransmitting a lot on the network?", "network_errors"),
])
def test_accounts_and_lost_packets_in_plain_words_name_their_family(text, family):
    # by topic words, or ("whose …?") by the kind asked: a person asked for leads with the per-user check
    assert family in read_question(text).families


@pytest.mark.parametrize("text", ["how much memory does the app use?", "is the network up?", "which process uses the cpu?"])
def test_no_account_or_packet_named_no_such_family(text):
    from appliance.analyzers.runner import for_question

    assert not {"user_load", "network_errors"} & set(for_question(text))


@pytest.mark.parametrize("text, first", [
    # a trend word beside a noun of one resource names that resource's growth first
    ("which file keeps growing?", "disk_growth"),
    ("is something writing a growing file on /mnt/x?", "disk_growth"),
    ("my disk space keeps going down, what is eating it?", "disk_growth"),
    ("which program keeps growing?", "memory_growth"),
    ("my memory keeps climbing all day", "memory_growth"),
])
def test_growth_words_name_the_resource_that_grows(text, first):
    from appliance.analyzers.runner import for_question

    families = for_question(text)
    growth = [f for f in families if f.endswith("_growth")]
    assert growth[0] == first


@pytest.mark.parametrize("text", [
    # sizes at one moment and trends of other things name no growth family
    "which process has the largest memory?",
    "is my cpu temperature rising?",
    "my wifi keeps dropping",
    "which folder is the biggest on /srv?",
])
def test_other_questions_name_no_growth(text):
    from appliance.analyzers.runner import for_question

    assert not [f for f in for_question(text) if f.endswith("_growth")]


@pytest.mark.parametrize("text", [
    # no account named, no access asked: no lookup
    "how big is /srv/data?",
    "is there room for backup files on /srv/data?",
    "which file under /srv/data keeps growing?",
    # trouble without an account ("the app" is none), errors of a log
    "the reports app has trouble with /srv/reports/q2.csv",
    "root has errors in /var/log/app.log, why?",
])
def test_a_path_named_without_an_account_or_an_access_asks_no_lookup(text):
    from appliance.analyzers.named_path import path_ask

    ask = path_ask(text)
    assert not ask.lookup and not ask.denial and ask.user is None


@pytest.mark.parametrize("text, named", [
    # a port or its connections said to hang or crawl: the listener's accept queue is the check
    ("folks say my service on port 8443 is sluggish to answer sometimes, anything wrong?", True),
    ("connections to 8443 feel laggy today. whats going on", True),
    # slowness of the machine, a port asked about without trouble: not this family
    ("why is my laptop slow?", False),
    ("is anything listening on port 8080?", False),
])
def test_a_port_that_hangs_asks_about_its_listeners_queue(text, named):
    from appliance.analyzers.runner import for_question

    assert ("network_errors" in for_question(text)) is named


@pytest.mark.parametrize("text, first", [
    # a question asking for a port, a user or a service is answered first from the verdict that
    # lists those, whatever other part its words touch ("busy" is a CPU word)
    ("my server wont come up, which port is busy?", "listening"),
    ("which user uses the most CPU?", "user_load"),
    # other kinds keep their words' order
    ("why is my computer slow?", "cpu"),
    ("which process is using the most memory?", "memory"),
    ("what is using port 8080?", "listening"),
])
def test_the_families_that_list_the_asked_kind_lead(text, first):
    assert read_question(text).families[0] == first


def test_a_model_relabelled_port_question_is_led_by_the_listening_verdict():
    question = read_question("my server wont come up, it says port busy")
    assert question.families[0] != "listening"  # its words: an explanation, about the CPU's "busy"
    relabelled = question.relabelled(Asks.PORT, Resource.NETWORK, True, known=["cpu", "listening", "reach"])
    assert relabelled.asks is Asks.PORT and relabelled.families[0] == "listening"
    assert set(question.families) <= set(relabelled.families)


@pytest.mark.parametrize("text, lead", [
    # file handles said plainly are the open-file limit's, not the inodes' ("files")
    ("is anything about to run out of file handles?", "open_files"),
    ("Too many file handles open somewhere? If so, which program?", "open_files"),
    # a deleted file still holding space is the deleted-files check's, not the inodes'
    ("Is any deleted file still holding space on the disk? If so, which process holds it?", "deleted_open"),
    ("I deleted a huge log but df still shows the disk full", "deleted_open"),
    # must not touch: lots of small files, a full disk, open files
    ("my disk is full of tiny files, am I out of inodes?", "inodes"),
    ("the disk is full, what is taking the space?", "filesystem_full"),
    ("which process has the most open files?", "open_files"),
])
def test_a_family_named_by_two_words_leads_one_named_by_a_shared_word(text, lead):
    assert read_question(text).families[0] == lead


def test_what_a_question_names_is_taken_exactly_as_written():
    q = read_question('is "redis-server" on port 6379 still writing /var/log/x.log, pid 4711, over udp to db.internal?')
    assert q.paths == ("/var/log/x.log",) and q.ports == (6379,) and q.pids == (4711,)
    assert "redis-server" in q.names and q.udp and q.hosts == ("db.internal",)
    assert "redis-server" in q.tokens and "/var/log/x.log" not in " ".join(q.tokens)


@pytest.mark.parametrize("text, asks, sure", [
    ("how many threads has it got", Asks.COUNT, True),
    ("how much swap is used", Asks.AMOUNT, True),
    ("which folder holds the most", Asks.FOLDER, True),
    ("what process owns it", Asks.PROCESS, True),
    ("is the spooler up?", Asks.YES_NO, True),
    ("why does it stall", Asks.EXPLANATION, True),
    ("everything crawls since this morning", Asks.EXPLANATION, False),
])
def test_the_structural_words_give_the_form_and_say_whether_they_said_it(text, asks, sure):
    q = read_question(text)
    assert (q.asks, q.sure) == (asks, sure)
    assert q.resource is Resource.NONE  # the part of the machine is the model's label


def test_the_model_labels_the_part_and_what_the_words_left_open_but_not_what_they_said():
    open_q = read_question("everything crawls since this morning")
    labelled = open_q.relabelled(Asks.PROCESS, Resource.CPU, True)
    assert (labelled.asks, labelled.resource, labelled.fault, labelled.source) == (Asks.PROCESS, Resource.CPU, True, "model")
    assert "cpu" in labelled.families
    said = read_question("how many threads has it got").relabelled(Asks.PROCESS, Resource.PROCESSES, False)
    assert said.asks is Asks.COUNT and said.resource is Resource.PROCESSES
    elsewhere = read_question("is the pizza place open?").relabelled(Asks.OUT_OF_SCOPE, Resource.NONE, True)
    assert elsewhere.asks is Asks.OUT_OF_SCOPE and not elsewhere.fault
