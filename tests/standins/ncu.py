"""SYNTHETIC stand-in for Nsight Compute, for running scripts/validate-gpu.sh end to end on a
machine without a GPU (tests/gpu_kit/mod.rs). It measures nothing.

For each profiling call it
  1. checks the command line with the REAL ncu ($CGP_STANDIN_REAL_NCU, once per distinct command
     shape): the real ncu parses every option and starts the real program, which fails without a
     GPU (`==ERROR== The application returned an error code`). An option the real ncu rejects
     fails this call with the real ncu's message and exit code. Options that the installed ncu is
     too old to know (`--config-file`, new in ncu 2023) are dropped for that check only, and the
     drop is logged to $CGP_STANDIN_STATE/real-ncu.log;
  2. writes, to --log-file, a repetition of the SYNTHETIC recording in $CGP_STANDIN_RECORDINGS
     (examples/recordings/main) for the program and --n of the command line, cycling through its
     repetitions; for planted builds (the build folder's name: extra1, extra3, extra10, badlaunch)
     gpu__time_duration.sum is scaled by 1.01, 1.03, 1.10 and 1.30 (vector_add's and reduce's
     dram__bytes_read.sum by the extra work too). The `N passes` lines are synthetic: 2 passes per
     requested metric, 1 for launch__* metrics.
`--version` is the real ncu's, when there is one. With $CGP_STANDIN_CHECK_EACH_TREE set, the real
ncu checks each program by its full path (each tree's build once), not by its name.
"""
import hashlib
import os
import re
import subprocess
import sys

argv = sys.argv[1:]
real = os.environ.get("CGP_STANDIN_REAL_NCU", "")
state = os.environ.get("CGP_STANDIN_STATE") or sys.exit("stand-in ncu: CGP_STANDIN_STATE is not set")
source = os.environ.get("CGP_STANDIN_RECORDINGS") or sys.exit("stand-in ncu: CGP_STANDIN_RECORDINGS is not set")
os.makedirs(state, exist_ok=True)

if argv[:1] == ["--version"]:
    if real:
        os.execv(real, [real, "--version"])
    print("NVIDIA (R) Nsight Compute Command Line Profiler\nVersion 2022.3.0.0 (stand-in)")
    sys.exit(0)

if "--log-file" not in argv:
    sys.exit("stand-in ncu: no --log-file in the command line")
li = len(argv) - 1 - argv[::-1].index("--log-file")
log_file = argv[li + 1]
app = argv[li + 2:]
if not app:
    sys.exit("stand-in ncu: no application after --log-file")
metrics = argv[argv.index("--metrics") + 1].split(",") if "--metrics" in argv else []

# 1. The real ncu checks the command line.
if real:
    opts = argv[:li]
    dropped = []
    if "--config-file" in opts:
        i = opts.index("--config-file")
        dropped = opts[i:i + 2]
        opts = opts[:i] + opts[i + 2:]
    program = os.path.abspath(app[0]) if os.environ.get("CGP_STANDIN_CHECK_EACH_TREE") else os.path.basename(app[0])
    shape = "\0".join(opts + [program])
    key = os.path.join(state, "checked-" + hashlib.sha256(shape.encode()).hexdigest()[:16])
    if not os.path.exists(key):
        real_log = os.path.join(state, "real-ncu-output.txt")
        cmd = [real] + opts + ["--log-file", real_log] + app
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
        out = p.stdout + (open(real_log, errors="replace").read() if os.path.exists(real_log) else "")
        with open(os.path.join(state, "real-ncu.log"), "a") as f:
            f.write(f"$ {' '.join(cmd)}\n(dropped for this check: {' '.join(dropped) or 'nothing'})\nexit {p.returncode}\n{out}\n")
        if "unrecognised option" in out or "unrecognized option" in out or p.returncode == 255:
            sys.stderr.write(out)
            sys.exit(p.returncode or 255)
        if "==PROF== Connected to process" not in out and "==ERROR== The application returned an error code" not in out:
            sys.stderr.write("stand-in ncu: the real ncu did not start the application:\n" + out)
            sys.exit(p.returncode or 1)
        open(key, "w").close()

# 2. A synthetic repetition.
prog = os.path.basename(app[0])
n = app[app.index("--n") + 1] if "--n" in app else None
variant = os.path.basename(os.path.dirname(os.path.dirname(os.path.abspath(os.path.join(os.getcwd(), app[0])))))
src_dir = os.path.join(source, prog, f"n={n}")
reps = sorted(int(f[:-4]) for f in os.listdir(src_dir) if f.endswith(".csv")) if os.path.isdir(src_dir) else []
if not reps:
    sys.exit(f"stand-in ncu: no synthetic data for {prog} n={n} in {source}")
counter = os.path.join(state, f"count-{prog}-{n}")
k = int(open(counter).read()) if os.path.exists(counter) else 0
open(counter, "w").write(str(k + 1))
text = open(os.path.join(src_dir, f"{reps[k % len(reps)]}.csv"), errors="replace").read()

time_factor = {"extra1": 1.01, "extra3": 1.03, "extra10": 1.10, "badlaunch": 1.30}.get(variant, 1.0)
bytes_factor = {"extra1": 1.01, "extra3": 1.03, "extra10": 1.10}.get(variant, 1.0) if prog in ("vector_add", "reduce") else 1.0
scale = {"gpu__time_duration.sum": time_factor, "dram__bytes_read.sum": bytes_factor}
passes = sum(1 if m.startswith("launch__") else 2 for m in metrics) or 1


def fmt(v, like):
    if "," in like or re.fullmatch(r"\d+", like):
        return f"{int(round(v)):,}"
    return f"{v:.2f}"


lines = text.splitlines()
out = []
header = None
for line in lines:
    if line.startswith("==PROF== Profiling"):
        out.append(re.sub(r"- \d+ pass(es)?$", f"- {passes} passes", line))
        continue
    if line.startswith('"ID"'):
        header = [c.strip('"') for c in line.split('","')]
        out.append(line)
        continue
    if header and line.startswith('"') and not line.startswith('""'):
        cells = line[1:-1].split('","')
        for i, name in enumerate(header):
            f = scale.get(name, 1.0)
            if f != 1.0 and i < len(cells):
                try:
                    cells[i] = fmt(float(cells[i].replace(",", "")) * f, cells[i])
                except ValueError:
                    pass
        out.append('"' + '","'.join(cells) + '"')
        continue
    out.append(line)
with open(log_file, "w") as f:
    f.write("\n".join(out) + "\n")
sys.exit(0)
