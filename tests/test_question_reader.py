"""The question reader: informal typing read like its spelled-out form, and the model's kind filling
only what the words left open. No model runs here (the labelled set measures the real one:
scripts/eval_questions.py)."""

from __future__ import annotations

import pytest

from appliance.agent.question.informal import as_typed
from appliance.agent.question.kinds import WHY, Asks, Resource
from appliance.agent.question.question import read_question


@pytest.mark.parametrize("typed, spelled", [
    ("whats wrong with my config", "what's wrong with my config"),
    ("it wont start and i dont know why", "it won't start and i don't know why"),
    ("Cant open it, pls help", "Can't open it, please help"),
    ("Why won\u2019t it start?", "Why won't it start?"),
])
def test_informal_typing_is_spelled_out(typed, spelled):
    assert as_typed(typed) == spelled


@pytest.mark.parametrize("text", [
    "Which process is using the most CPU? Give its name and PID.",
    "is /srv/cant/dont.log growing?",  # paths are never rewritten
    "does nginx -u www-data run? option y/n",
    "Is port 8080 free?",
])
def test_text_that_is_spelled_out_already_or_is_a_path_is_left_alone(text):
    assert as_typed(text) == text


@pytest.mark.parametrize("text, asks", [
    # typed without apostrophes, as its spelled-out form
    ("my computer sees the internet but not the printer. whats wrong", Asks.EXPLANATION),
    ("cant log in since this morning, can you read /srv/web/auth.log and tell me", Asks.LOG_CAUSE),
    # "in use … by what?" asks for the process
    ("linux wont let me eject my sd card, says its in use. by what?", Asks.PROCESS),
    # a yes/no question followed by "which X?" asks for the X
    ("is something on this computer open to the outside? which ports?", Asks.PORT),
    ("are there dead processes around? which process left them?", Asks.PROCESS),
    # a yes/no clause after a preamble
    ("before i pull out the disk at /mnt/usb: does any program still have something open on it?", Asks.YES_NO),
    # a link is a file
    ("some file is missing but the link is there. which link is broken", Asks.FILE),
    # the noun right after which/what is the thing asked for, whatever else the question names
    ("which process has files open on /mnt/backup?", Asks.PROCESS),
    ("what program keeps the folders under /srv locked?", Asks.PROCESS),
    ("which file is that process writing to?", Asks.FILE),
    ("which folder has the most files?", Asks.FOLDER),
    # "what is <doing> …" asks for the doer; "what is filling the disk" for where the space went
    ("/srv/in seems to be filling up on its own, what is writing to it?", Asks.PROCESS),
    ("what is eating my cpu", Asks.PROCESS),
    ("what is filling my disk?", Asks.FOLDER),
    # a yes/no question about users asks yes or no; which/whose asks for the user
    ("is any user hogging this machine?", Asks.YES_NO),
    ("which user is hogging this machine?", Asks.USER),
    ("whose account is hogging the cpu?", Asks.USER),
    # a log asked for by which is a file
    ("free space on /srv/in keeps shrinking, which log is ballooning?", Asks.FILE),
    # a request to look ("can u check", "could you take a look") is no yes/no question
    ("something here is spawning a ton of threads i think. can u check", Asks.EXPLANATION),
    ("could you take a look at my laptop, it is slow", Asks.EXPLANATION),
])
def test_plain_phrasings_read_as_their_kind(text, asks):
    assert read_question(text).asks is asks


@pytest.mark.parametrize("text, asks", [
    # the class: a person asked for in everyday words, not "user" or "account"
    ("which of us on this shared server is burning the most ram", Asks.USER),
    ("one of the people logged in here is using all the cpu, who", Asks.USER),
    ("my coworker keeps running heavy jobs, can you check who's using the most", Asks.USER),
    ("who here is using all the cpu", Asks.USER),
    ("which login is eating the cpu", Asks.USER),
    ("who is using all the memory", Asks.USER),
    ("who owns /srv/reports?", Asks.USER),  # a file's owner is an account
    ("someone on this box is hogging everything, who is it?", Asks.USER),  # a person said to do it, then who
    # "who" of a thing a program holds asks for the program, not a person
    ("who is using port 8080", Asks.PROCESS),
    ("who's using /mnt/usb, i cant unmount it", Asks.PROCESS),
    ("who is eating my disk", Asks.PROCESS),
    # other kinds the people words must not take
    ("how many people are logged in?", Asks.COUNT),
    ("something is hogging this machine, what is it", Asks.PROCESS),
    ("someone keeps filling the disk, which folder is it?", Asks.FOLDER),
    ("is anyone logged in?", Asks.YES_NO),
    ("which port is my app listening on?", Asks.PORT),
    ("which process uses the most memory?", Asks.PROCESS),
])
def test_a_person_asked_for_in_everyday_words_is_a_user_and_who_holds_a_port_is_a_program(text, asks):
    assert read_question(text).asks is asks


@pytest.mark.parametrize("text, asks", [
    # other classes the same rules must not touch
    ("Is anything listening on port 9090?", Asks.YES_NO),
    ("Can the user deploy read /srv/app/config.yml?", Asks.YES_NO),
    ("Which process is using the most CPU?", Asks.PROCESS),
    ("How many zombie processes are there?", Asks.COUNT),
    ("Why is my laptop slow?", Asks.EXPLANATION),
    ("what's the weather in Paris tomorrow", Asks.OUT_OF_SCOPE),
    ("why is the log full of errors since the update?", Asks.LOG_CAUSE),
    # a which beside "what's going on"; a yes/no question beside a request to look, "check if …",
    # "can <someone> …?"
    ("what is using my disk?", Asks.PROCESS),
    ("whats going on with my disk? which folder is so big?", Asks.FOLDER),
    ("how come? which process is it?", Asks.PROCESS),
    ("could you help? is anything listening on 8080?", Asks.YES_NO),
    ("can you check if nginx is running?", Asks.YES_NO),
    ("can nobody open /srv/x?", Asks.YES_NO),
    ("can you tell me which process uses port 80?", Asks.PROCESS),
])
def test_other_kinds_read_as_before(text, asks):
    assert read_question(text).asks is asks


@pytest.mark.parametrize("text, asks", [
    # the class: "whose" opening a question or clause asks for the person
    ("whose process is eating all the memory?", Asks.USER),
    ("the server crawls. whose job is it?", Asks.USER),
    ("something is hogging the cpu, whose is it?", Asks.USER),
    ("can you tell me whose account runs the heavy job?", Asks.USER),
    # "whose" after a noun only relates: the question asks what its other words ask
    ("which process, the one whose memory keeps growing, is it?", Asks.PROCESS),
    ("how many processes whose name is worker are running?", Asks.COUNT),
    ("did the job whose log is /var/log/backup.log report any errors?", Asks.YES_NO),
    ("there is a file whose size keeps growing, which one is it?", Asks.FILE),
])
def test_whose_asks_for_a_person_only_where_it_opens_a_question(text, asks):
    assert read_question(text).asks is asks


@pytest.mark.parametrize("text", ["which process, the one whose memory keeps growing, is it?",
                                  "a folder whose files I cannot read, which one is it?"])
def test_a_relative_whose_names_no_per_user_check(text):
    assert "user_load" not in read_question(text).families


def test_the_model_fills_what_a_statement_asks_but_never_overrules_a_why():
    open_statement = read_question("all my space is gone on this computer somehow")
    assert not open_statement.sure and open_statement.asks is Asks.EXPLANATION
    assert open_statement.open_labels
    assert open_statement.relabelled(Asks.FOLDER, Resource.DISK_SPACE, True).asks is Asks.FOLDER
    assert open_statement.relabelled(Asks.SYSTEM_FACT, Resource.NONE, False).asks is Asks.SYSTEM_FACT
    assert open_statement.relabelled(Asks.YES_NO, Resource.DISK_SPACE, True).asks is Asks.EXPLANATION
    why = read_question("why is my laptop so slow?")
    assert why.form == WHY
    assert why.relabelled(Asks.PROCESS, Resource.CPU, True).asks is Asks.EXPLANATION
    sure = read_question("Which user owns the most processes?")
    assert sure.relabelled(Asks.PROCESS, Resource.PROCESSES, False).asks is Asks.USER
    # a statement reporting a failure is a complaint, never a thing the model picks
    failing = read_question("I can't save files in /srv/docs anymore")
    assert failing.failure and failing.relabelled(Asks.FILE, Resource.DISK_SPACE, True).asks is Asks.EXPLANATION
    assert failing.relabelled(Asks.FILE, Resource.DISK_SPACE, True).resource is Resource.DISK_SPACE  # the rest fills


@pytest.mark.parametrize("text", [
    "cant save anything in /srv/drop anymore, whats going on",
    "whats up with my wifi today",
    "how come the fan never stops",
    "what is happening to /srv/site? pages vanish",
])
def test_an_open_request_for_what_happens_is_a_why_the_model_cannot_make_a_thing(text):
    # the class: "what's going on / what's happening / what's up with / how come" asks for the cause,
    # like "why"; the model once turned such a complaint into "which file?" and its answer named a file
    why = read_question(text)
    assert why.form == WHY and why.asks is Asks.EXPLANATION
    assert why.relabelled(Asks.FILE, Resource.DISK_SPACE, True).asks is Asks.EXPLANATION


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


def test_the_path_ask_reads_the_words_as_typed_spelled_out():
    question = read_question("why cant nobody read /srv/reports/q2.csv")
    assert question.path_ask.lookup and question.path_ask.user == "nobody"


@pytest.mark.parametrize("text, out_of_scope", [
    # a chore or request about computers in general: no word points its machine words at this one
    ("Write a Python function that sorts a list.", True),
    ("can you recomend a good laptop to buy", True),
    ("Translate 'disk full' into German.", True),
    ("suggest a name for a new server", True),
    # the same shapes about this machine stay questions about it
    ("explain why my disk is full", False),
    ("can you help me with my slow laptop", False),
    ("recommend what to delete on this disk to free space", False),
    ("tell me about the processes hogging the cpu", False),
    ("write down which process uses the most memory", False),
    ("explain the errors in /var/log/syslog", False),
])
def test_a_request_is_out_of_scope_when_none_of_its_machine_words_points_at_this_machine(text, out_of_scope):
    assert (read_question(text).asks is Asks.OUT_OF_SCOPE) is out_of_scope


@pytest.mark.parametrize("text, rate, doer", [
    ("how fast is /srv/spool filling?", True, False),
    ("space on /srv/spool keeps disappearing, which file and how quickly?", True, False),
    ("at what rate is the log growing?", True, False),
    ("how many errors per minute does the app log?", True, False),
    ("what is growing in /srv/spool and who writes it?", False, True),
    ("How many worker processes are running, and which process starts them?", False, True),
    ("how many copies of foo are there and what starts them?", False, True),
    ("which file under /srv/spool was written by what?", False, True),
    # neither: a size, a duration, a symptom's frequency, the files filling a disk
    ("how big is /var/log?", False, False),
    ("how long has this machine been up?", False, False),
    ("which cron job runs every minute?", False, False),
    ("something starts every minute and slows everything down", False, False),
    ("what is filling my disk?", False, False),
])
def test_an_amount_per_unit_of_time_and_the_process_doing_it_are_read_from_the_words(text, rate, doer):
    question = read_question(text)
    assert (question.rate, question.doer) == (rate, doer)


@pytest.mark.parametrize("text, out_of_scope", [
    # general knowledge, in any shape, with nothing pointed at this machine
    ("what's the difference between tcp and udp", True),
    ("how does a hash table work", True),
    ("what does http error 418 mean in general", True),
    ("is python faster than java", True),
    ("can you give me a regex that matches email addresses", True),
    ("how do I center a div in css", True),
    ("convert 5 miles to km", True),
    ("what's 15% of 80", True),
    ("whats a good name for my cat", True),
    # the same shapes about this machine
    ("how do I check disk space?", False),
    ("how can I tell which process uses port 8080?", False),
    ("is my disk faster than my network?", False),
    ("give me a list of the biggest files on my disk", False),
    ("what's the difference between the two logs in /var/log/app?", False),
    ("how does the backup job on this box work?", False),
    ("what's a good way to free space on this laptop?", False),
    ("what does 'target is busy' mean?", False),
])
def test_general_knowledge_is_out_of_scope_unless_it_points_at_this_machine(text, out_of_scope):
    assert (read_question(text).asks is Asks.OUT_OF_SCOPE) == out_of_scope


@pytest.mark.parametrize("text, asks, resource", [
    # "log in" is a verb: a login is read from the logs, but the question asks no log's cause
    ("ssh into this box is super slow to log in", Asks.EXPLANATION, Resource.LOGS),
    ("I cant log on as root anymore, why?", Asks.EXPLANATION, Resource.LOGS),
    ("what are the errors in the log in /var/log/app?", Asks.LOG_CAUSE, Resource.LOGS),
    # a question shaped like one about the world, with computer words in it, is about this machine
    ("who is logged in right now", Asks.USER, None),
    ("who is using port 8080", None, Resource.NETWORK),
    ("what is the best way to free up disk space", None, Resource.DISK_SPACE),
    ("who is the president of france", Asks.OUT_OF_SCOPE, None),
    ("what is the best filesystem for an ssd", Asks.OUT_OF_SCOPE, None),
])
def test_a_login_is_no_log_and_a_worldly_shape_with_computer_words_is_about_this_machine(text, asks, resource):
    question = read_question(text)
    if asks is not None:
        assert question.asks is asks
    else:
        assert question.asks is not Asks.OUT_OF_SCOPE
    if resource is not None:
        assert question.resource is resource


@pytest.mark.parametrize("text, resource, family, not_family", [
    # how often a symptom comes, said with "time", is no question about the clock
    ("hard drive is grinding all the time, which program", Resource.DISK_IO, "disk_io", "clock"),
    ("the fan spins up every time I open a browser", Resource.CPU, "sensors", "clock"),
    ("the clock is wrong all the time", Resource.TIME, "clock", None),
    ("what time is it on this box", None, "clock", None),
    # a drive said to work hard is disk activity, whatever its noun
    ("everything freezes when saving, something is thrashing the ssd", Resource.DISK_IO, "disk_io", None),
    ("my drive light never stops blinking", Resource.DISK_IO, "disk_io", None),
    # "hog" belongs to the resource hogged; with none named, to the CPU
    ("the network feels jammed up, is some program hogging connections?", Resource.NETWORK, "connections", None),
    ("which app is hogging all the memory", Resource.MEMORY, "memory", None),
    ("something is hogging this machine, what is it", Resource.CPU, None, None),
    # "load" the verb of pages is the network's; "load" the noun stays the CPU's
    ("internet is super flaky and pages half load", Resource.NETWORK, None, None),
    ("youtube videos wont load, they just buffer", Resource.NETWORK, None, None),
    ("the load is 12 on 2 cores, why", Resource.CPU, "cpu", None),
])
def test_frequency_words_drive_nouns_and_hogs_are_read_for_the_part_they_are_about(text, resource, family, not_family):
    question = read_question(text)
    if resource is not None:
        assert question.resource is resource, question
    if family is not None:
        assert family in question.families, question
    if not_family is not None:
        assert not_family not in question.families, question


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


@pytest.mark.parametrize("text, fault", [
    ("is anything running an absurd number of threads?", True),
    ("which program has a ton of open network connections", True),
    ("my box feels like one program spun up hundreds of workers", True),
    ("which program has the most network connections", False),
    ("how many threads does nginx run?", False),
])
def test_excess_said_plainly_looks_for_a_fault(text, fault):
    assert read_question(text).fault is fault


@pytest.mark.parametrize("text, fault", [
    # the class: a setting or a file suspected of being bad looks for a fault (its "no" rests on the checks)
    ("Is any setting in /etc/relay/relay.conf invalid? If so, which?", True),
    ("is my fstab malformed?", True),
    ("could the database file be corrupted?", True),
    # plain facts keep no fault
    ("what is the hostname of this machine?", False),
    ("is the config file at /etc/relay/relay.conf readable by root?", False),
])
def test_a_setting_suspected_of_being_invalid_looks_for_a_fault(text, fault):
    assert read_question(text).seeks_fault is fault


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
