"""The `inspect_path` tool: everything about one path that `stat`, `ls -l`, `lsattr`, `getfacl`,
`getcap`, `file`, `namei`, `findmnt`, `lslocks` and `fuser` say, with the flags they point at.

Why a profile: asked about one file, a model that sees only the folder's listing answers about the
folder, or guesses. Metadata is read for any path the policy lets one list; the content is sniffed
only where the policy lets one read it, and never more than content_kind.SAMPLE_BYTES.
"""

from __future__ import annotations

import os
import stat
import time
from typing import Annotated

import psutil

from appliance.tools import units
from appliance.tools.base import ok, tool
from appliance.tools.components import group_name, look_up, user_name
from appliance.tools.content_kind import SAMPLE_BYTES, sniff
from appliance.tools.context import ToolContext
from appliance.tools.file_attrs import NOTABLE, acl, capabilities, inode_flags
from appliance.tools.flags import Flag, flag_dicts
from appliance.tools.holders import Holder, describe, holding
from appliance.tools.mount_info import locks_on, mount_of
from appliance.tools.path_facts import folder_summary, permissions, sizes, times, type_word
from appliance.tools.path_flags import attribute_flags, content_flags, deleted_flag, run_flags
from appliance.tools.paths import PathDenied, read_capped
from appliance.tools.procs import own_tree
from appliance.tools.schema import Doc, MaxLen

HOLDERS_SECONDS = 2.0
HOLDERS_SHOWN = 5


def _link(written: str) -> dict:
    found = look_up(written)
    out: dict = {"target": os.readlink(written), "resolves": found.exists}
    if found.exists:
        out["resolves_to"] = os.path.realpath(written)
    else:
        out["lookup_stops"] = found.problem
    return out


def _content(ctx: ToolContext, path: str, name: str) -> dict:
    """The kind of content, from at most SAMPLE_BYTES read through the path policy; or why not read."""
    try:
        fd, _real, st = ctx.policy.open_file(path)
    except PathDenied as exc:
        return {"not_read": str(exc)}
    except OSError as exc:
        return {"not_read": f"cannot be opened ({exc.strerror or exc})"}
    try:
        raw = read_capped(fd, SAMPLE_BYTES + 1)
    finally:
        os.close(fd)
    whole = len(raw) <= SAMPLE_BYTES
    content = sniff(raw[:SAMPLE_BYTES], whole, name)
    if not whole:
        content["sampled"] = f"the first {units.size(SAMPLE_BYTES)} only"
    text = raw.strip()
    if whole and content.get("kind") == "text" and text.isdigit() and len(text) <= 10:
        content["pid_named"] = int(text)
        content["pid_running"] = psutil.pid_exists(int(text))
    return content


def _holders(ctx: ToolContext, real: str, only_deleted: bool = False) -> tuple[list[dict], int]:
    """The first HOLDERS_SHOWN processes holding the path (holders.holding), those holding a deleted
    file first and the appliance's own last; and how many others hold it. Only those shown are described."""
    found = holding(real, HOLDERS_SECONDS)
    own = own_tree(ctx.self_pids)

    def deleted(h: Holder) -> bool:
        return any(p.endswith(" (deleted)") for p in h.paths)

    chosen = [h for h in found.holders if deleted(h) or not only_deleted]
    chosen.sort(key=lambda h: (h.pid in own, not deleted(h), h.pid))
    return [describe(h, own) for h in chosen[:HOLDERS_SHOWN]], sum(h.pid not in own for h in chosen)


def _missing(ctx: ToolContext, path: str, written: str) -> dict:
    """A path that is gone: still a profile when a process holds it open deleted, else an error."""
    rows = [r for r in _holders(ctx, written, only_deleted=True)[0] if written + " (deleted)" in r["paths"]]
    if not rows:
        raise FileNotFoundError(f"{path} does not exist" + (f": {look_up(written).problem}" if look_up(written).problem else ""))
    flags = deleted_flag(written, rows)
    return ok({"path": written, "headline": f"{written} was deleted but {len(rows)} process(es) still hold it open",
               "type": "deleted file still held open", "held_open_by": rows, "flags": flag_dicts(flags)})


def _storage(real: str, written: str, st: os.stat_result, data: dict, flags: list[Flag]) -> str:
    """The filesystem the path lives on, its attributes, ACLs and capabilities, into `data` (and
    their flags into `flags`); the mount point when it forbids executing, else ""."""
    mount = mount_of(real)
    noexec = ""
    if mount is not None:
        data["filesystem"] = {"mount_point": mount.point, "type": mount.fstype, "source": mount.source,
                              "options": ",".join(mount.options)}
        if mount.restrictions:
            data["filesystem"]["restrictions"] = mount.restrictions
        noexec = mount.point if "noexec" in mount.options else ""
    attrs = inode_flags(real, st)
    if isinstance(attrs, tuple):
        shown = [a for a in attrs[0] if a in NOTABLE]
        data["attributes"] = shown or "none of note"
        data["lsattr"] = attrs[1]
        flags += attribute_flags(written, attrs[0])
    else:
        data["attributes"] = attrs
    for key, value in (("acl", acl(real)), ("capabilities", capabilities(real))):
        if value:
            data[key] = value
    return noexec


@tool(reads="filesystems", ttl=5.0, timeout=10.0, example={"path": "/etc/hosts"})
def inspect_path(
    ctx: ToolContext,
    path: Annotated[str, MaxLen(512), Doc("absolute path (or ~/...)")],
) -> dict:
    """All about one path (stat, lsattr, getfacl, file, namei, findmnt): type, mode and who may do what, owner, times,
    link target, mount options, attributes, ACLs, locks and holders, content kind (script, ELF, certificate), flags."""
    real = str(ctx.policy.resolve(path, "list"))
    written = os.path.normpath(os.path.expanduser(path.strip()))
    if not os.path.lexists(written):
        return _missing(ctx, path, written)
    now = time.time()
    data: dict = {"path": written}
    flags: list[Flag] = []
    if stat.S_ISLNK(os.lstat(written).st_mode):
        data["link"] = _link(written)
        if not data["link"]["resolves"]:
            data["headline"] = f"{written} is a dangling link: {data['link']['lookup_stops']}"
            flags.append(Flag("dangling_link", "warning", data["headline"]))
            data["flags"] = flag_dicts(flags)
            return ok(data)
    st = os.stat(real)
    kind = type_word(st.st_mode)
    perms = permissions(st)
    data.update({"type": kind, **sizes(st), **perms, "owner": user_name(st.st_uid), "group": group_name(st.st_gid),
                 **times(st, now), "hard_links": st.st_nlink})
    noexec = _storage(real, written, st, data, flags)
    locks = locks_on(st)
    if locks:
        data["locks"] = [lock.says() for lock in locks]
    held, total = _holders(ctx, real)
    if held:
        data["held_open_by"] = held
        data["held_open_by_total"] = total
        flags += deleted_flag(written, held)
    content: dict = {}
    if stat.S_ISREG(st.st_mode):
        content = _content(ctx, real, os.path.basename(real))
        data["content"] = content
        flags += run_flags(written, st.st_mode, content, noexec) + content_flags(written, content)
    elif stat.S_ISDIR(st.st_mode):
        data["folder"] = folder_summary(real)
    what = content.get("kind") or kind
    data["headline"] = f"{written} is a {what if what != 'text' else 'text file'} of {units.size(st.st_size)}, " \
                       f"{perms['mode']} {data['owner']}:{data['group']}" + \
                       (f" (through the link to {data['link']['target']})" if "link" in data else "") + \
                       (f"; {len(flags)} flag(s)" if flags else "")
    data["flags"] = flag_dicts(flags)
    return ok(data)
