"""The families of the checklist's process and path readings (issue 32, items 1-4, 6, 7), for the
sealed split: each a real plant and its control (appliance/eval/plants/checklist.py) and four
phrasings, written before any tuning and never run with a model while the code was built.

The vague phrasings use no technical terms (no "mount", "symlink", "RSS", "inode"), as a person
who does not know the cause would type them.
"""

from __future__ import annotations

from appliance.eval.families import Family
from appliance.eval.plants import checklist

SEALED_FAMILIES: tuple[Family, ...] = (
    Family(
        "path_holders", "a process with its working directory and an open file on a mounted disk; control: the same "
                        "process working elsewhere",
        checklist.plant_path_holders, checklist.control_path_holders,
        "umount {mount} fails with 'target is busy'. Which process is keeping it busy? Give its name and PID.",
        "I can't eject the backup drive at {mount}, it says it's still in use. What's using it?",
        "Is any process using files on {mount}? If so, which one?",
        "is it safe to unplug the backup drive at {mount}? is anything still using it?",
        asks=('process', 'process', 'process', 'yes_no'),
    ),
    Family(
        "process_names", "a parent keeping 72 forked copies of one worker; control: the same parent with 3",
        checklist.plant_process_names, checklist.control_process_names,
        "How many {worker} processes are running, and which process starts them? Give the parent's name and PID.",
        "there are loads of copies of the same program running on this box, where are they all coming from?",
        "Is any program running in an unusually large number of copies? If so, which process starts them?",
        "are there way too many copies of some program running?",
        asks=('count', 'process', 'process', 'yes_no'),
    ),
    Family(
        "user_load", "two busy loops running as the web server's user; control: the same two, asleep",
        checklist.plant_user_load, checklist.control_user_load,
        "Which user's processes are using the most CPU right now? Give the user name.",
        "somebody on this computer is hogging it and everything is slow, who is it?",
        "Is any single user taking an unusual share of the CPU or memory? If so, which user?",
        "is one person hogging this machine?",
        asks=('user', 'user', 'user', 'yes_no'),
    ),
    Family(
        "memory_growth", "a process whose memory grows 8 MiB/s; control: the same name holding a steady 64 MiB",
        checklist.plant_memory_growth, checklist.control_memory_growth,
        "Which process's memory keeps growing? Give its name and PID.",
        "the computer gets slower the longer it's on, like something keeps eating more and more of it. what is it?",
        "Is the memory use of any process growing steadily right now? If so, which?",
        "is something slowly eating up my computer's memory?",
        asks=('process', 'process', 'process', 'yes_no'),
    ),
    Family(
        "disk_growth", "a writer appending 2 MiB/s to a trace on a 256 MiB tmpfs; control: one 4 MiB write",
        checklist.plant_disk_growth, checklist.control_disk_growth,
        "Free space on {mount} keeps shrinking. What is growing there, which process writes it, and how fast?",
        "the space on {mount} keeps going down all by itself, what's doing that?",
        "Is anything on {mount} growing right now? If so, what and how fast?",
        "is {mount} filling up by itself?",
        asks=('file', 'process', 'file', 'yes_no'),
    ),
    Family(
        "path_lookup", "a config path through a link to a release folder that is gone; control: the link's release exists",
        checklist.plant_path_lookup, checklist.control_path_lookup,
        "The shop app fails with 'No such file or directory' for {path}, but the folder is there. What is the cause?",
        "my shop app says it can't find {path} but I can see the folder right there, what's wrong?",
        "Does {path} exist, and can it be opened?",
        "is {path} ok?",
        asks=('explanation', 'explanation', 'yes_no', 'yes_no'),
    ),
    Family(
        "path_permission", "a folder on the way closed to everyone but root; control: the same folder open to all",
        checklist.plant_path_permission, checklist.control_path_permission,
        "The user {user} gets 'Permission denied' reading {path}. Which folder blocks it, and why?",
        "the website isn't allowed to open {path}, but the file itself looks fine. why not?",
        "Can the user {user} read {path}?",
        "can the website get at {path}?",
        asks=('folder', 'explanation', 'yes_no', 'yes_no'),
    ),
    Family(
        "file_counts", "one subfolder of a queue with 24,000 files beside three small ones; control: 40 files",
        checklist.plant_file_counts, checklist.control_file_counts,
        "Listing files under {root} takes forever. Which folder has the most files?",
        "opening {root} hangs for ages every time, why?",
        "Does any folder under {root} hold an unusually large number of files? If so, which?",
        "is there anything in {root} that would make it slow to open?",
        asks=('folder', 'explanation', 'folder', 'yes_no'),
    ),
)
