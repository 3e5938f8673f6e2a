"""Families about one named thing (issue 52): a file, a process, a program or this machine, asked
about by its path, pid, name or as "this machine". Each a real plant and its control
(appliance/eval/plants/profiles_files.py, profiles_procs.py) and four phrasings, written on
2026-12-07 before the tools that read such a thing's profile existed, and never run with a model
while they were built.

Two tables. `TUNED_FAMILIES` join `dev` and `dev2` after the old families, split by the same rule
(appliance/eval/scenarios.py): immutable, certificate, stopped_process, stale_pidfile, writing_to.
`SEALED_FAMILIES` join the sealed split whole (appliance/eval/sealed.py lists this module), and no
family name selects them: not_executable, script_format, cpu_pinned, installed, own_address.

The vague phrasings use the words of a person who does not know the cause (no "attribute",
"affinity", "CRLF", "SIGSTOP").
"""

from __future__ import annotations

from appliance.eval.families import Family
from appliance.eval.plants import profiles_files as files
from appliance.eval.plants import profiles_procs as procs

TUNED_FAMILIES: tuple[Family, ...] = (
    Family(
        "immutable", "a settings file marked immutable (chattr +i); control: the same file, writable",
        files.plant_immutable, files.control_immutable,
        "Saving {path} fails with 'Operation not permitted', even as root. What is stopping changes to it?",
        "i cant edit {path} even with sudo, it just says operation not permitted. whats going on?",
        "Is anything preventing root from changing {path}?",
        "can i still edit {path} or is it locked somehow?",
        asks=("explanation", "explanation", "yes_no", "yes_no"),
    ),
    Family(
        "certificate", "a site certificate that expired 3 days ago; control: one valid for a year",
        files.plant_certificate, files.control_certificate,
        "Browsers reject the site that uses the certificate {path}. Is the certificate still valid, and until when?",
        "the shop site suddenly shows a big security warning, its cert is {path}. whats wrong with it?",
        "Has the certificate {path} expired, or will it expire soon?",
        "is the cert at {path} ok?",
        asks=("explanation", "explanation", "yes_no", "yes_no"),
    ),
    Family(
        "stopped_process", "a worker stopped by SIGSTOP, named by pid and name; control: the same worker running",
        procs.plant_stopped_process, procs.control_stopped_process,
        "Process {pid} ({name}) uses no CPU and does no work any more, though its queue is full. What state is it "
        "in, and why?",
        "{name} (pid {pid}) just froze, nothing in its log and its not using any cpu. whats up with it?",
        "Is process {pid} ({name}) running normally, or has it been stopped?",
        "is {name} ok? its pid {pid}",
        asks=("explanation", "explanation", "yes_no", "yes_no"),
    ),
    Family(
        "stale_pidfile", "a pid file naming a process that died; control: the pid file names the live service",
        files.plant_stale_pidfile, files.control_stale_pidfile,
        "The mail queue service refuses to start and says it is already running, but I don't think it is. Its pid "
        "file is {pidfile}. What is going on?",
        "mailqueue wont start, keeps saying its already running?? pid file is {pidfile}",
        "Is the process named in the pid file {pidfile} actually running?",
        "is mailqueue really up? its pid file is {pidfile}",
        asks=("explanation", "explanation", "yes_no", "yes_no"),
    ),
    Family(
        "writing_to", "a process appending to one file while it holds two others for reading; control: reading only",
        procs.plant_writing_to, procs.control_writing_to,
        "Which file is process {pid} ({name}) writing to?",
        "{name} (pid {pid}) keeps writing stuff somewhere, what file is it?",
        "Is process {pid} ({name}) writing to any file? If so, which?",
        "is {name} (pid {pid}) changing any of my files?",
        asks=("file", "file", "file", "yes_no"),
    ),
)

SEALED_FAMILIES: tuple[Family, ...] = (
    Family(
        "not_executable", "a script with no execute permission for anyone; control: the same script, executable",
        files.plant_not_executable, files.control_not_executable,
        "Running {path} fails with 'Permission denied', even as root. Why can't it be run?",
        "my backup script {path} wont start, it just says permission denied. whats up?",
        "Is anything stopping {path} from being run as a program?",
        "can i run {path} ok or will it complain?",
        asks=("explanation", "explanation", "yes_no", "yes_no"),
    ),
    Family(
        "script_format", "a bash script saved with Windows line endings; control: the same script with Unix ones",
        files.plant_script_format, files.control_script_format,
        "Running {path} fails with 'cannot execute: required file not found', though the file is there and bash "
        "is installed. What is wrong with the script?",
        "i copied my deploy script to {path} and now it wont run, says no such file or directory?? its right there",
        "Is there anything in {path} that would stop it from running?",
        "will {path} run ok if i start it?",
        asks=("explanation", "explanation", "yes_no", "yes_no"),
    ),
    Family(
        "cpu_pinned", "a multi-threaded job pinned to one CPU (sched_setaffinity); control: the same job unpinned",
        procs.plant_cpu_pinned, procs.control_cpu_pinned,
        "My job {name} (pid {pid}) never uses more than one core, though this machine has more. Why?",
        "why does my render job ({name}, pid {pid}) only ever use one core??",
        "Is process {pid} ({name}) limited to only some of this machine's CPUs?",
        "can {name} (pid {pid}) use all the cores on this box?",
        asks=("explanation", "explanation", "yes_no", "yes_no"),
    ),
    Family(
        "installed", "a plausible program this machine does not have; control: one a package installed",
        procs.plant_installed, procs.control_installed,
        "Is {program} installed on this machine? If so, where?",
        "cant run {program}, do i even have it on here?",
        "Is {program} installed here, and which package provides it?",
        "do i have {program} on this box? i need it for a script",
        asks=("yes_no", "yes_no", "yes_no", "yes_no"),
    ),
    Family(
        "own_address", "no fault: this machine's own IP address, from its interfaces (not the gateway)",
        procs.plant_own_address, procs.plant_own_address,
        "What is this machine's IP address?",
        "whats the ip of this box? i need it to connect from my laptop",
        "Which IP address does this machine have on its network interface?",
        "what address do i type on my other pc to reach this computer?",
        has_fault=False,
        asks=("system_fact", "system_fact", "system_fact", "system_fact"),
    ),
)
