"""The model reads the question: it picks what is asked, the resource and whether a fault is
suspected, from short lists, under a grammar.

Why the model: the words' reader knows only the phrasings it was written for; a person complaining
in words it does not know ("my laptop crawls when I open two tabs") still gets the right kind of
question. Why labels: a small model is poor at open judgment and good at choosing one label of a
short list; the grammar makes any other reply impossible. The lexical reading is shown as a prior
and stays the answer when the model cannot be asked or its reply does not parse.

What a label means and the worked labels are the last section of the system prompt, which every
run shares and the prompt cache keeps evaluated; the call itself sends only the question, so it
costs the question's tokens and a few generated ones, not the ~800 tokens of its instructions.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Generator, Sequence

from appliance.agent import events as ev
from appliance.agent.question.question import Asks, Question, Resource
from appliance.agent.model_call import ModelCaller
from appliance.agent.stops import ModelFailed
from appliance.llm.base import ChatModel, Generation, Message

ASKS_HELP = (
    "process = which program or process; user = which user or account; file = which file; "
    "folder = which folder (what fills the disk); filesystem = which disk, partition or mount; "
    "port = a network port or socket; service = a service, timer or scheduled job; "
    "log_cause = the cause an error log shows; count = how many of something; "
    "amount = how much, how long, how full (a number with its unit); yes_no = a question answered yes or no; "
    "explanation = why something happens, or a complaint about the machine; "
    "system_fact = a plain fact about this machine (kernel, OS, hostname, time zone, CPU model, addresses, "
    "DNS, boot time); out_of_scope = not about this computer at all"
)
RESOURCE_HELP = (
    "cpu (processor, load, fan, heat, slowness), memory (RAM, swap), disk_space, disk_io (reading and "
    "writing), network (ports, connections, DNS, firewall), files (open files, handles, links, permissions), "
    "processes (counts, trees, crashes, restarts, services, jobs), time (clock, uptime, boot), logs, "
    "config (settings files), none"
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "asks": {"enum": [a.value for a in Asks]},
        "resource": {"enum": [r.value for r in Resource]},
        "fault": {"type": "boolean"},
    },
    "required": ["asks", "resource", "fault"],
    "additionalProperties": False,
}
MAX_TOKENS = 40


# Worked labels, one or more per kind, in words unlike any evaluation's: a small model copies the
# shape of examples far better than it follows a description.
EXAMPLES: tuple[tuple[str, str, str, bool], ...] = (
    ("the printer spooler seems to eat all my processor time", "process", "cpu", True),
    ("which account is running the heaviest jobs on this server", "user", "cpu", True),
    ("which file in my home is the biggest", "file", "disk_space", False),
    ("my drive is almost out of room, where did all the gigabytes go", "folder", "disk_space", True),
    ("which partition is nearly full", "filesystem", "disk_space", True),
    ("what program has port 6000 open", "port", "network", False),
    ("which scheduled task runs every night at 3", "service", "processes", False),
    ("the nightly export died, the log is in /srv/export/out.log, what went wrong", "log_cause", "logs", True),
    ("how many copies of the worker are running right now", "count", "processes", False),
    ("how much swap is in use", "amount", "memory", False),
    ("is anything listening on 2222", "yes_no", "network", False),
    ("videos stutter and the whole thing feels sticky since yesterday", "explanation", "cpu", True),
    ("i cant save anything, it keeps saying no space", "explanation", "disk_space", True),
    ("which linux version is installed here", "system_fact", "none", False),
    ("recommend me a good pizza place nearby", "out_of_scope", "none", False),
    ("write a short story about a dragon", "out_of_scope", "none", False),
)


LABEL_REQUEST = "Label this question (see \"Labelling a question\" above), before any tool."


def label_section() -> str:
    """The system prompt's section that says what each label means, with the worked labels."""
    lines = [
        "# Labelling a question",
        "When a message asks you to label a question, reply with one JSON object with three keys.",
        f"asks (what the question asks for): {ASKS_HELP}.",
        f"resource (the part of the machine it is about): {RESOURCE_HELP}.",
        "fault: true when the person reports or suspects that something is wrong.",
        "Examples:",
    ]
    lines += [f'Question: {text}\n{{"asks": "{asks}", "resource": "{resource}", "fault": {str(fault).lower()}}}'
              for text, asks, resource, fault in EXAMPLES]
    return "\n".join(lines)


def label_message(question: Question) -> str:
    """The user message that asks for the labels: the question last (small models act on what they
    read last)."""
    return f"{LABEL_REQUEST}\nQuestion: {question.text.strip()}"


def parse_labels(text: str) -> tuple[Asks, Resource, bool] | None:
    """The three labels of a reply, or None when it is not the object the grammar allows."""
    try:
        data = json.loads(text)
        return Asks(data["asks"]), Resource(data["resource"]), bool(data["fault"])
    except (ValueError, KeyError, TypeError):
        return None


def label_messages(question: Question, system: Message) -> list[Message]:
    """The call that asks for the labels, after the run's own system prompt."""
    return [system, Message("user", label_message(question))]


def labelled(question: Question, generation: Generation, known: Sequence[str] = ()) -> Question:
    """The question with the model's labels where the words left them open; as read by the words
    when the reply cannot be used."""
    labels = parse_labels(generation.text) if generation.finish_reason == "stop" else None
    if labels is None:
        return question
    asks, resource, fault = labels
    return question.relabelled(asks, resource, fault, known)


def is_label_call(schema: dict) -> bool:
    """The schema is the labels' (a scripted model tells this call from a step's)."""
    return schema.get("properties", {}).keys() == SCHEMA["properties"].keys()


def classify(question: Question, model: ChatModel, system: Message, *, known: Sequence[str] = (),
             should_stop: Callable[[], bool] | None = None) -> tuple[Question, Any]:
    """The question relabelled by the model in one direct call, and the call's statistics (scripts
    that measure the reader; a run makes the same call through its own model caller)."""
    generation = model.generate(label_messages(question, system), SCHEMA, max_tokens=MAX_TOKENS, temperature=0.0,
                                should_stop=should_stop)
    return labelled(question, generation, known), generation.stats


def read_by_model(question: Question, caller: ModelCaller, system: Message,
                  known: Sequence[str] = ()) -> Generator[ev.Event, None, Question]:
    """A run's labelling call, through its model caller (counted, cancellable, within its budget).
    Only its prompt progress is shown: the labels are not the model's answer. A model that cannot
    answer leaves the words' reading; it fails again at its first step, where that is recorded."""
    try:
        for event in caller.generate(0, label_messages(question, system), SCHEMA, MAX_TOKENS, "question",
                                     temperature=0.0):
            if not isinstance(event, ev.TextDelta):
                yield event
    except ModelFailed:
        return question
    return labelled(question, caller.last, known) if caller.last is not None else question
