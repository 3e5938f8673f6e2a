"""The `unnamed` split: questions of kinds no family, analyzer or answer rule of the project names,
each on a real plant of its own (appliance/eval/plants/unnamed_*.py), written on 2026-12-07 before
the answer path of issue 55 was built and never read to change code (docs/eval.md).

A case is one question, as people type it (precise or vague, lowercase and typos included), about
one kind of fact of this machine: a folder's size, a file's owner or day of change, a process's
parent, age, options or priority, a user's processes, a port two programs share, what a client is
connected to, when a job runs. `control` cases ask where the right answer is no or none (nothing
changed, a user who runs nothing, a server that is not running). `expect` names the kind of truth
the plant's checks hold (a size, a day, a user, a process, yes, no, a number, a path, a duration,
words); `right` says in one line what a right answer must contain.

Its cases run only through `--split unnamed` (or a case's own name): no family name selects them and
`full` never holds them (appliance/eval/scenarios.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from appliance.eval.fault import Fault
from appliance.eval.plants import unnamed_files as files
from appliance.eval.plants import unnamed_net as net
from appliance.eval.plants import unnamed_procs as procs
from appliance.eval.plants import unnamed_users as users
from appliance.eval.sandbox import Sandbox

# The kinds of truth a case's checks hold.
EXPECTS = ("size", "day", "user", "process", "yes", "no", "number", "path", "duration", "words")


@dataclass(frozen=True)
class UnnamedCase:
    kind: str  # the kind of question (the case's family in reports)
    question: str  # a template: {slots} come from the plant
    plant: Callable[[Sandbox], Fault]
    expect: str  # one of EXPECTS
    right: str  # what a right answer must contain, in one line
    asks: str  # what the question asks for (an `Asks` value of appliance/agent/question/kinds.py)
    phrasing: str = "vague"  # precise | vague
    control: bool = False  # the right answer is no, none or nothing

    @property
    def name(self) -> str:
        return f"{self.kind}.{'control' if self.control else 'ask'}"


def _c(kind: str, question: str, plant: Callable[[Sandbox], Fault], expect: str, right: str, asks: str,
       phrasing: str = "vague") -> UnnamedCase:
    return UnnamedCase(kind, question, plant, expect, right, asks, phrasing, control=True)


CASES: tuple[UnnamedCase, ...] = (
    # files and folders
    UnnamedCase("folder_size", "how much space is {folder} taking up?", files.plant_folder_size, "size",
                "its size on disk (about 37 MiB) with a unit, within 12 %", "amount"),
    UnnamedCase("file_mtime", "When was {file} last modified?", files.plant_file_mtime, "day",
                "the day it was last changed: 9 March 2025", "amount", "precise"),
    UnnamedCase("largest_file", "whats the biggest file in {folder}", files.plant_largest_file, "path",
                "the 11 MiB db-2024-11-06.sql.gz", "file"),
    UnnamedCase("symlink_target", "which release does {link} point to right now?", files.plant_symlink_target,
                "path", "v2.14.1 (not the newest release folder)", "folder"),
    UnnamedCase("own_filesystem", "is {folder} its own seperate disk or is it just part of the main one?",
                files.plant_own_filesystem, "yes", "yes: a filesystem of its own (a tmpfs mounted there)", "yes_no"),
    _c("own_filesystem", "Is {folder} on a separate filesystem from the rest of the system?",
       files.control_own_filesystem, "no", "no: it is a plain folder on the filesystem around it", "yes_no",
       "precise"),
    UnnamedCase("filesystem_type", "what kind of filesystem is {folder}? ext4 or something else?",
                files.plant_filesystem_type, "words", "tmpfs", "filesystem"),
    UnnamedCase("world_writable", "can other users on this machine change {file}? dont want anyone messing with it",
                files.plant_world_writable, "yes", "yes: anyone may write it (mode 0666)", "yes_no"),
    _c("world_writable", "Can users other than its owner write to {file}?", files.control_world_writable, "no",
       "no: only its owner may write it (mode 0644)", "yes_no", "precise"),
    UnnamedCase("hardlink_count", "How many hard links does {file} have?", files.plant_hardlink_count, "number",
                "4 (or: three other names)", "count", "precise"),
    UnnamedCase("sparse_size", "ls says {file} is 4 gb but my free space didnt go down when i made it. how much "
                "space does it actually use", files.plant_sparse_size, "size",
                "about 3 MiB on disk (its blocks), within 30 %", "amount"),
    UnnamedCase("recently_changed", "did anything in {folder} get changed in the last hour? which file?",
                files.plant_recently_changed, "path", "30-limits.conf", "file"),
    _c("recently_changed", "Has any file in {folder} been modified in the past hour?",
       files.control_recently_changed, "no", "no: every file there dates from January 2024", "yes_no", "precise"),
    UnnamedCase("hidden_files", "are there any hidden files in {folder} that i cant see with a normal ls?",
                files.plant_hidden_files, "path", ".syncstash-7f3e.bin", "file"),
    _c("hidden_files", "does {folder} have hidden files in it", files.control_hidden_files, "no",
       "no hidden file", "yes_no"),
    UnnamedCase("file_holder", "Which program has {file} open right now?", files.plant_file_holder, "process",
                "ledgerd (its name or pid)", "process", "precise"),
    _c("file_holder", "i want to move {file} somewhere else, is any program still using it?",
       files.control_file_holder, "no", "no program has it open", "yes_no"),
    # user accounts
    UnnamedCase("file_owner", "who owns {file}?", users.plant_file_owner, "user", "the account rhea-xxxx", "user"),
    UnnamedCase("process_user", "what user is {name} runing as", users.plant_process_user, "user",
                "the account tomas-xxxx", "user"),
    UnnamedCase("user_process_count", "How many processes is the user {user} running?",
                users.plant_user_process_count, "number", "6", "count", "precise"),
    UnnamedCase("group_member", "is {user} in the staff group?", users.plant_group_member, "yes",
                "yes: a member of staff", "yes_no"),
    _c("group_member", "Does the account {user} belong to the staff group?", users.control_group_member, "no",
       "no: not a member of staff", "yes_no", "precise"),
    UnnamedCase("user_space", "how much room do {user}'s files take up in {folder}?", users.plant_user_space,
                "size", "about 19 MiB (the account's files only) with a unit, within 12 %", "amount"),
    _c("user_idle", "whats {user} running on this box right now?", users.control_user_idle, "no",
       "nothing: the account has no processes", "process"),
    _c("user_absent", "is there a user account called {user} on this machine?", users.control_user_absent, "no",
       "no such account", "yes_no"),
    # processes and memory
    UnnamedCase("parent_process", "What started process {pid}? Give the parent's name.", procs.plant_parent,
                "process", "deployctl (its name or pid)", "process", "precise"),
    UnnamedCase("process_age", "how long has {name} been running for?", procs.plant_process_age, "duration",
                "its age with a unit, within 2 minutes (or its start to the minute)", "amount"),
    UnnamedCase("compare_memory", "which one is using more memory, {first} or {second}? and how much",
                procs.plant_compare_memory, "process", "photoidx and its size (about 370 MiB, within 25 %)",
                "process"),
    UnnamedCase("process_cwd", "what folder is {name} working in?", procs.plant_process_cwd, "path",
                "the folder srv/fax/outgoing", "folder"),
    UnnamedCase("process_options", "what options was {name} started with", procs.plant_process_options, "words",
                "--profile quarterly-close", "explanation"),
    UnnamedCase("nice_value", "What is the nice value of {name}?", procs.plant_nice, "number", "12", "amount",
                "precise"),
    _c("nice_value", "is {name} running at a lower priority than normal programs?", procs.control_nice, "no",
       "no: it runs at the normal priority (nice 0)", "yes_no"),
    UnnamedCase("process_memory", "how much ram is {name} using", procs.plant_process_memory, "size",
                "its resident size (about 230 MiB) with a unit, within 15 %", "amount"),
    UnnamedCase("memory_available", "How much memory is still available on this machine?",
                procs.plant_memory_available, "size", "the available memory with a unit, within 10 %", "amount",
                "precise"),
    _c("not_running", "is redis running on this box?", procs.control_not_running, "no",
       "no: no redis process runs", "yes_no"),
    # sockets and a scheduled job
    UnnamedCase("port_shared", "is more than one program using port {port}?", net.plant_port_shared, "yes",
                "yes: two processes listen on it", "yes_no"),
    _c("port_shared", "Is port {port} shared by several processes?", net.control_port_shared, "no",
       "no: only one process listens on it", "yes_no", "precise"),
    UnnamedCase("socket_peer", "what is {name} connected to?", net.plant_socket_peer, "process",
                "the pricefeed server or its port", "port"),
    _c("socket_peer", "is {name} talking to anything over the network", net.control_socket_peer, "no",
       "no: it has no connection", "yes_no"),
    UnnamedCase("ipv6_listener", "Is {name} listening on IPv6?", net.plant_ipv6_listener, "yes",
                "yes: on ::1", "yes_no", "precise"),
    UnnamedCase("unix_socket", "what program is behind the socket file {path}?", net.plant_unix_socket,
                "process", "printspool (its name or pid)", "process"),
    UnnamedCase("job_schedule", "when does the {job} cron job run?", net.plant_job_schedule, "words",
                "Sundays at 02:30 (or 30 2 * * 0)", "explanation"),
)
