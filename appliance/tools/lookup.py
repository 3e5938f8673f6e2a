"""The `path_lookup` tool: a path component by component (`namei -l`), and who may pass it.

Why a tool of its own: "No such file or directory" on a path that `ls` shows, and "Permission
denied" on one that exists, are answered by the components on the way, not by the path's listing.
The lookup itself is `appliance.tools.components` (the path policy's missing-path message uses it too).
"""

from __future__ import annotations

import os
from typing import Annotated

from appliance.tools.base import ERROR, fail, ok, tool
from appliance.tools.components import Step, account, blocked_for, kind_word, look_up, ls_mode
from appliance.tools.context import ToolContext
from appliance.tools.schema import Doc, MaxLen
from appliance.tools.shown_names import shown_path, shown_paths_in


def _row(step: Step) -> dict:
    out: dict = {"path": shown_path(step.path), "type": kind_word(step.kind) if step.kind != "missing" else "MISSING"}
    if step.st is not None:
        out["mode"] = ls_mode(step.st)
    if step.target:
        out["points_to"] = shown_path(step.target)
    if step.via:
        out["via_link"] = shown_path(step.via)
    return out


@tool(reads="filesystems", ttl=5.0, timeout=10.0, example={"path": "/etc/nginx/nginx.conf", "user": "www-data"})
def path_lookup(
    ctx: ToolContext,
    path: Annotated[str, MaxLen(512), Doc("the path as the program uses it")],
    user: Annotated[str, MaxLen(32), Doc("optional user to check access for")] = "",
) -> dict:
    """A path part by part (like namei -l): links and their targets, the first missing part, owner and mode.
    Use for "No such file or directory" or "Permission denied"."""
    ctx.policy.resolve(path, "list")  # the deny-list and the roots; the lookup follows the name as written
    found = look_up(os.path.normpath(os.path.expanduser(path.strip())))
    data: dict = {"path": shown_path(path), "exists": found.exists}
    if found.problem:
        data["headline"] = shown_paths_in(f"{path} cannot be reached: {found.problem}")
        data["problem"] = shown_paths_in(found.problem)
    else:
        data["headline"] = f"{path} exists ({kind_word(found.steps[-1].kind)})"
    data["components"] = [_row(step) for step in found.steps]
    if user.strip():
        who = account(user.strip())
        if who is None:
            return fail(f"no user named {user!r} on this machine", ERROR, data)
        blocked = blocked_for(found, *who)
        data["user"] = user.strip()
        if blocked is None:
            data["verdict_for_user"] = f"{user} may pass every folder" + (" and read it" if found.exists else "")
        else:
            step, refused = blocked
            data["verdict_for_user"] = f"{user} may not {refused} {step.path} ({ls_mode(step.st) if step.st else '?'})"
            data["headline"] += f"; {data['verdict_for_user']}"
    return ok(data)
