"""The flags an expert would point at on a path's profile, from its facts: changes refused even to
root by an attribute, a program nobody may run, a mount that forbids running it, a certificate
expired or near its end, a pid file naming no process, a missing interpreter or loader, Windows
line endings on a script, a config that does not parse, a deleted file still held open."""

from __future__ import annotations

from appliance.tools.flags import Flag

EXPIRY_WARNING_DAYS = 30


def attribute_flags(path: str, attributes: list[str]) -> list[Flag]:
    out = []
    if "immutable" in attributes:
        out.append(Flag("immutable", "warning", f"{path} is immutable (chattr +i): no one, not even root, may change, "
                                                "rename or delete it until the attribute is removed"))
    if "append-only" in attributes:
        out.append(Flag("append_only", "warning", f"{path} is append-only (chattr +a): even root may only add to its end, "
                                                  "never rewrite, truncate or delete it"))
    return out


def runnable(content: dict) -> bool:
    return content.get("kind") in ("script", "ELF") and content.get("elf_type") != "relocatable object"


def run_flags(path: str, mode: int, content: dict, noexec_mount: str) -> list[Flag]:
    out = []
    if runnable(content) and not mode & 0o111:
        out.append(Flag("not_executable", "warning", f"{path} is a {content['kind'] if content['kind'] == 'script' else 'program'} "
                                                     f"but no one may execute it (no x bit in {oct(mode & 0o777)[2:]})"))
    if noexec_mount and (mode & 0o111 or runnable(content)):
        out.append(Flag("noexec_mount", "warning", f"{path} is on {noexec_mount}, mounted noexec: nothing on it may be run "
                                                   "directly, whatever its mode"))
    if content.get("kind") == "script" and content.get("interpreter_exists") is False:
        named = content.get("runs_program") or content.get("interpreter") or "(none)"
        why = " (its #! line ends in a carriage return)" if content.get("interpreter_note") else ""
        out.append(Flag("interpreter_missing", "critical", f"{path} asks for the interpreter {named}, which is not on this "
                                                           f"machine{why}"))
    if content.get("kind") == "ELF" and content.get("loader") and content.get("loader_exists") is False:
        out.append(Flag("loader_missing", "critical", f"{path} needs the loader {content['loader']}, which is not on this "
                                                      "machine (it is built for another system or architecture)"))
    if content.get("kind") == "script" and content.get("windows_line_endings"):
        out.append(Flag("windows_line_endings", "warning", f"{path} is a script with Windows (CRLF) line endings; the "
                                                           "shell and the kernel read the carriage returns as part of each line"))
    return out


def content_flags(path: str, content: dict) -> list[Flag]:
    out = []
    for cert in content.get("certificates", []):
        who = cert["subject"] or "(no subject)"
        if cert["expired"]:
            out.append(Flag("cert_expired", "critical", f"the certificate for {who} in {path} expired on "
                                                        f"{cert['not_after']} ({cert['expired_days_ago']} days ago)"))
        elif cert.get("not_yet_valid"):
            out.append(Flag("cert_not_yet_valid", "warning", f"the certificate for {who} in {path} is not valid before "
                                                             f"{cert['not_before']}"))
        elif cert["days_left"] <= EXPIRY_WARNING_DAYS:
            out.append(Flag("cert_expiring", "warning", f"the certificate for {who} in {path} expires on {cert['not_after']}, "
                                                        f"in {cert['days_left']} days"))
    if content.get("chain_in_order") is False:
        out.append(Flag("chain_out_of_order", "warning", f"the certificates in {path} are not in chain order (each one's "
                                                         "issuer the next one's subject), which TLS clients may reject"))
    if content.get("pid_running") is False:
        out.append(Flag("stale_pid_file", "warning", f"{path} names pid {content['pid_named']}, and no process has that pid: "
                                                     "a stale pid file (its program stopped without removing it)"))
    if content.get("syntax_ok") is False:
        out.append(Flag("syntax_error", "warning", f"{path} is not valid {content['format']}: {content['first_error']} "
                                                   f"at line {content['first_error_line']}"))
    return out


def deleted_flag(path: str, holders: list[dict]) -> list[Flag]:
    held = [h for h in holders if not h.get("self") and any(p.endswith(" (deleted)") for p in h.get("paths", []))]
    if not held:
        return []
    first = held[0]
    return [Flag("held_open_deleted", "warning", f"{len(held)} process(es) hold a deleted file of {path} open (first: pid "
                                                 f"{first['pid']} {first['name']}); its space is freed only when they close it")]
