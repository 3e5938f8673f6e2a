"""The checklist's families that live in the machine's own configuration: a host name /etc/hosts pins
to the wrong address, and a cron table with a heavy job every minute. Sealed (appliance/eval/sealed.py
lists this module); phrasings written before any tuning and never run with a model.

Their plants change /etc for real and take exactly their tagged lines and files out again, on
tear-down or, after a crash, through the reaper (appliance/eval/etc_files.py).
"""

from __future__ import annotations

from appliance.eval.families import Family
from appliance.eval.plants import checklist_names as plants

SEALED_FAMILIES: tuple[Family, ...] = (
    Family(
        "name_resolution", "an /etc/hosts line pinning a host name to an address nothing answers at; "
                           "control: the same name with no entry",
        plants.plant_name_resolution, plants.control_name_resolution,
        "Programs on this machine that connect to {host} end up at the wrong server. Where does this machine "
        "send {host}, and why?",
        "{host} keeps going to the wrong box from here but works from my laptop, what gives?",
        "Does anything in this machine's own configuration override which address {host} goes to?",
        "is this box sending {host} somewhere weird?",
        asks=('explanation', 'explanation', 'yes_no', 'yes_no'),
    ),
    Family(
        "scheduled_jobs", "a cron table running a heavy tar job every minute; control: a daily clean-up job",
        plants.plant_scheduled_jobs, plants.control_scheduled_jobs,
        "Which cron job on this machine runs every minute? Give its schedule and command.",
        "something starts every minute and slows everything down, what is it?",
        "Is any cron job on this machine scheduled to run every minute? If so, which?",
        "is there some job on here that runs like every minute?",
        asks=('explanation', 'explanation', 'yes_no', 'yes_no'),
    ),
)
