"""Tuned-on phrasings of the checklist families (split `dev3`): the checklist's families are sealed
whole, so without these nothing of theirs could be run and read while tuning.

Written on 2026-12-05 in other words than the sealed phrasings (appliance/eval/families_checklist_*):
one question about each family's fault and one about its control, on the family's own plants.
Reading these cases' steps is allowed; it says nothing about the sealed ones.
"""

from __future__ import annotations

from dataclasses import dataclass

from appliance.eval.sealed import Phrasing


@dataclass(frozen=True)
class DevPhrasings:
    """One question about a checklist family's fault and one about its control."""

    family: str
    fault: Phrasing
    control: Phrasing


def _d(family: str, fault: tuple[str, str], control: tuple[str, str]) -> DevPhrasings:
    return DevPhrasings(family, Phrasing(*fault), Phrasing(*control))


DEV3: tuple[DevPhrasings, ...] = (
    _d("path_holders",
       ("trying to unmount {mount} and it refuses, says something is busy on it. find whatever is doing that",
        "process"),
       ("before i pull out the disk at {mount}: does any program still have something open on it?", "yes_no")),
    _d("process_names",
       ("the process list is full of the same program over and over. what keeps launching them all?", "process"),
       ("do i have some program running in hundreds of copies?", "yes_no")),
    _d("user_load",
       ("this shared server has been crawling all afternoon. whose account is responsible?", "user"),
       ("is any one account using most of the processor at the moment?", "yes_no")),
    _d("memory_growth",
       ("some program's memory use goes up every few seconds and never comes down. which one is leaking?",
        "process"),
       ("is the memory of any program climbing right now, or is it all steady?", "yes_no")),
    _d("disk_growth",
       ("free space on {mount} drops every minute and i did nothing. which file keeps getting bigger?", "file"),
       ("is some file on {mount} getting bigger right now?", "yes_no")),
    _d("path_lookup",
       ("my tool dies with 'No such file or directory' on {path}, yet the folder shows up when i look. why?",
        "explanation"),
       ("can {path} be opened without any error?", "yes_no")),
    _d("path_permission",
       ("{user} gets permission denied when it opens {path}. what exactly is in the way?", "explanation"),
       ("is there anything stopping {user} from reading {path}?", "yes_no")),
    _d("file_counts",
       ("ls in {root} takes minutes to finish. which folder in there is stuffed with files?", "folder"),
       ("is any folder under {root} holding a crazy number of files?", "yes_no")),
    _d("reach",
       ("colleagues cant open the thing on port {port} from their pcs but it works fine for me on this one. how "
        "come?", "explanation"),
       ("will other computers on the network be able to reach port {port} here?", "yes_no")),
    _d("cgroup_limits",
       ("a job here runs painfully slowly even though the processor is mostly idle. is something limiting it?",
        "yes_no"),
       ("is some process being held back by a cpu limit right now?", "yes_no")),
    _d("network_errors",
       ("clients connecting to port {port} sit there waiting and never get in. whats going on?", "explanation"),
       ("are all the listening services on this box taking their connections?", "yes_no")),
    _d("stalled_tasks",
       ("a process wont go away even with kill -9 and the load keeps going up. which one is stuck?", "process"),
       ("is anything stuck waiting on the disk right now?", "yes_no")),
    _d("name_resolution",
       ("when i connect to {host} from this machine i land on the wrong server. where is this box sending it?",
        "explanation"),
       ("is {host} pinned to some address by a file on this machine?", "yes_no")),
    _d("scheduled_jobs",
       ("something kicks off every single minute on here and the disk gets hammered. what job is that?", "service"),
       ("are there any jobs set to run every minute on this machine?", "yes_no")),
    _d("system_facts",
       ("which kernel is this box on, and is it virtualized or a container?", "system_fact"),
       ("tell me the kernel release, and whether we are inside a vm or a container", "system_fact")),
)
