#!/usr/bin/env python3
"""Writes tests/fixtures/cupti/kernel-layouts.txt: the offset and size of every field of the
CUpti_ActivityKernelN record that each CUPTI release produces, compiled from that release's own
cupti_activity.h. The injection library (crates/cgp-profile/src/cupti/inject.c) reads kernel records by offset, and
tests/cupti_lib.rs lays records out by this table to check it, version by version.

    python3 scripts/cupti-layouts.py NAME=INCLUDE_DIR ... > tests/fixtures/cupti/kernel-layouts.txt

NAME says where the header came from (e.g. `debian-libcupti-dev-11.8.87`,
`pypi-nvidia-cuda-cupti-13.5.25`); INCLUDE_DIR holds its cupti_activity.h (a wheel's
`nvidia/cuda_cupti/include` or `nvidia/cu13/include`). The record version is the one the header's
CUpti_ActivityKind comment names for CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL. Needs a C compiler and
a cuda.h on the include path (Debian's nvidia-cuda-dev); the headers use only pointers to its types.
"""
import hashlib
import os
import re
import subprocess
import sys
import tempfile


def struct_fields(text, name):
    """Top-level field names of `typedef struct ... { ... } name;`, in order."""
    end = text.index("} " + name + ";")
    start = text.rindex("typedef struct", 0, end)
    body = text[text.index("{", start) + 1:end]
    body = re.sub(r"/\*.*?\*/", " ", body, flags=re.S)
    body = re.sub(r"//[^\n]*", " ", body)
    fields, depth, stmt = [], 0, ""
    for ch in body:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == ";" and depth == 0:
            m = re.search(r"(\w+)\s*(\[[^\]]*\])?\s*(:\s*\d+)?\s*$", stmt)
            if m and not m.group(3):
                fields.append(m.group(1))
            stmt = ""
            continue
        stmt += ch
    return fields


def main():
    out = ["# Offsets and sizes of the fields of each CUPTI release's kernel activity record,",
           "# compiled from that release's cupti_activity.h by scripts/cupti-layouts.py.",
           "# source NAME SHA256(cupti_activity.h) api CUPTI_API_VERSION record N",
           "# N sizeof BYTES | N FIELD OFFSET SIZE"]
    seen = set()
    for arg in sys.argv[1:]:
        name, inc = arg.split("=", 1)
        path = os.path.join(inc, "cupti_activity.h")
        raw = open(path, "rb").read()
        text = raw.decode("latin-1")
        record = int(re.search(r"CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL\s*=", text) and
                     re.findall(r"is \\ref CUpti_ActivityKernel(\d+)\.\s*\*/\s*CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL",
                                text)[0])
        api = re.search(r"#define CUPTI_API_VERSION (\d+)",
                        open(os.path.join(inc, "cupti_version.h")).read()).group(1)
        out.append(f"source {name} {hashlib.sha256(raw).hexdigest()} api {api} record {record}")
        if record in seen:
            continue
        seen.add(record)
        kind = f"CUpti_ActivityKernel{record}"
        fields = struct_fields(text, kind)
        lines = [f'printf("{record} sizeof %zu\\n", sizeof({kind}));']
        lines += [f'printf("{record} {f} %zu %zu\\n", offsetof({kind}, {f}), sizeof(((({kind} *)0)->{f})));'
                  for f in fields]
        src = ("#include <stddef.h>\n#include <stdio.h>\n#include <cupti_activity.h>\n"
               "int main(void) {\n" + "\n".join(lines) + "\nreturn 0; }\n")
        with tempfile.TemporaryDirectory() as d:
            c, exe = os.path.join(d, "l.c"), os.path.join(d, "l")
            open(c, "w").write(src)
            subprocess.run(["cc", "-I", inc, "-o", exe, c], check=True)
            out += subprocess.run([exe], check=True, capture_output=True, text=True).stdout.splitlines()
    print("\n".join(out))


main()
