#!/usr/bin/env python3
"""badflags.py: every flag of every kvbench tool, given the bad values a
user mistypes, checked against design.md section 7 and style.md's rule for
messages.

    go build -o BIN/ ./cmd/... && python3 bench/badflags.py BIN [-v] [FILTER]

For each flag that `TOOL --help` lists (kvtrace and its export, inspect and
models; kvreplay; kvreport and merge) it tries: an empty value, negative,
zero, huge (1e30, 2^63, 2^64), NaN and Inf, a wrong unit, a value with a
newline or a control character, and where a path is taken a directory,
/dev/null, a missing file and a FIFO (fed, or read, so that nothing waits
for a peer that never comes); bools given a value; each flag twice; and
several bad flags at once. Each case runs the built binary with a 10 s
timeout and is judged:

  status   2 for a refused value (1 where the run failed on a value it took)
  lines    one line of stderr per problem
  names    the line names the flag (or the path) and the value
  lower    lowercase after "TOOL: " (an option or a name may start it)
  gointernal  none of strconv., "invalid syntax", "%!", "<nil>", Go types
  panic    no "panic:" or "goroutine " dump
  hang     ends within the timeout

A value a tool takes (status 0) is listed as "accepted" for a person to
judge: many are meant (a label may be empty, --seed 0 is a seed). Prints
one row per case that breaks a rule, and the totals.
"""
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRACE = os.path.join(ROOT, "testdata", "reference", "llama8b_u10_d30_gpu0_cpu4_s42.csv")

GO_INTERNAL = re.compile(
    r"strconv\.|invalid syntax|%!|<nil>|\bfloat64\b|\bint64\b|\buint64\b|\*os\.|"
    r"\bjson: cannot unmarshal|\btime\.Duration\b|\bmain\.|\berrors\.|\bpflag\b|"
    r"\bstruct \{|\bslice\b|\bmap\[")
PANIC = re.compile(r"^panic:|^goroutine \d+|^fatal error:|runtime error", re.M)

HUGE = ["1e30", "9223372036854775808", "18446744073709551616"]
NUMERIC_BAD = ["", "-1", "0", *HUGE, "NaN", "Inf", "-Inf", "5x", "1,5", "0x10"]
CTRL = ["a\nb", "a\x1b[31mb", "\t"]

# Flags whose value is a path the tool reads (in) or writes (out).
PATHS_IN = {"config", "burst-trace-path", "dataset-path", "request-trace",
            "validation-trace", "device", "start-barrier"}
PATHS_OUT = {"output", "io-trace-log", "latency-dump", "xlsx-output", "o"}
DIRS = {"dir", "cache-dir"}

# Flags the help calls a number, though pflag holds a string.
NUMERIC_STRINGS = {"size-scale", "rank", "ranks", "start-at", "slo-ms"}


def help_flags(binary, sub):
    """The (name, type) pairs of the Options section of binary's help."""
    args = [binary] + ([sub] if sub else []) + ["--help"]
    out = subprocess.run(args, capture_output=True, text=True, timeout=10).stdout
    flags = []
    for line in out.split("Options:", 1)[1].splitlines():
        m = re.match(r"\s+(?:-\w, )?--([\w-]+)(?: (\S+))?\s{2,}", line)
        if not m:
            m = re.match(r"\s+(?:-\w, )?--([\w-]+)(?: (\S+))?$", line)
        if m and m.group(1) not in ("help", "version"):
            flags.append((m.group(1), m.group(2) or "bool"))
    return flags


class Env:
    """Scratch paths: a directory, a FIFO and where runs write."""

    def __init__(self, binaries):
        self.tmp = tempfile.mkdtemp(prefix="badflags-")
        self.dir = os.path.join(self.tmp, "adir")
        os.mkdir(self.dir)
        self.rdir = os.path.join(self.tmp, "rdir")
        os.mkdir(self.rdir)
        self.fifo = os.path.join(self.tmp, "fifo")
        os.mkfifo(self.fifo)
        self.missing = os.path.join(self.tmp, "missing", "nothing.csv")
        self.out = os.path.join(self.tmp, "out")
        os.mkdir(self.out)
        self.result = os.path.join(self.tmp, "r.json")
        subprocess.run([binaries["kvreplay"], "--speed", "max", "--dir", self.rdir,
                        "--size-scale", "1/1024", "-q", "-o", self.result, TRACE],
                       check=True, capture_output=True, timeout=60)


def base_args(tool, sub, env):
    """A command line that runs briefly and succeeds, as flag -> value
    (None for a bool) and positional arguments."""
    o = env.out
    if tool == "kvtrace" and sub is None:
        return {"duration": "1", "num-users": "1", "io-trace-log": o + "/t.csv"}, []
    if sub == "export":
        return {"to": "fio", "dir": env.rdir, "output": o + "/exp",
                "size-scale": "1/1024", "no-space-check": None}, [TRACE]
    if sub == "inspect":
        return {}, [TRACE]
    if sub == "models":
        return {}, []
    if tool == "kvreplay":
        return {"speed": "max", "dir": env.rdir, "size-scale": "1/1024", "quiet": None,
                "output": o + "/r.json"}, [TRACE]
    if sub == "merge":
        return {"output": o + "/m.json"}, [env.result]
    return {"output": o + "/rep.txt"}, [env.result]


def values_for(name, typ, env):
    """The bad values to give flag name of help type typ."""
    if typ == "bool":
        return ["=maybe", "=", "=2"]
    vals = list(CTRL)
    if typ in ("int", "uint", "float", "duration", "bytes", "speed") or name in NUMERIC_STRINGS:
        vals += NUMERIC_BAD
    else:
        vals += ["", "bogus"]
    if typ == "bytes":
        vals += ["1MB", "-1MiB", "1.5.3", "1 MiB", "1e30MiB"]
    if typ == "duration":
        vals += ["-5s", "5", "1e30s", "300000h"]
    if name == "size-scale":
        vals += ["1/0", "0/1", "-1/4", "1/-4", "1/NaN", "2"]
    if name in PATHS_IN or name in PATHS_OUT or name in DIRS or typ in ("FILE", "DIR"):
        vals += [env.dir, "/dev/null", env.missing, env.fifo, "-"]
    return list(dict.fromkeys(vals))


def run_case(binary, args, env, timeout=10):
    """Runs binary with args; feeds a FIFO named in them with garbage and
    reads it too, so that neither side waits forever."""
    stop = threading.Event()
    writes = any(a.lstrip("-") in PATHS_OUT for a, b in zip(args, args[1:]) if b == env.fifo)

    def peer():
        # Meet the tool once: feed a FIFO it reads with a line that is
        # no trace, or drain one it writes.
        while not stop.is_set():
            try:
                mode = os.O_RDONLY if writes else os.O_WRONLY
                fd = os.open(env.fifo, mode | os.O_NONBLOCK)
            except OSError:
                stop.wait(0.02)
                continue
            if not writes:
                try:
                    os.write(fd, b"not,a\ntrace\x00\n")
                except OSError:
                    pass
                os.close(fd)
                return
            while not stop.is_set():
                try:
                    if os.read(fd, 65536) == b"":
                        stop.wait(0.02)
                except BlockingIOError:
                    stop.wait(0.02)
            os.close(fd)
            return

    t = None
    if env.fifo in args:
        t = threading.Thread(target=peer, daemon=True)
        t.start()
    cwd = tempfile.mkdtemp(dir=env.tmp, prefix="cwd-")
    try:
        p = subprocess.run([binary] + args, capture_output=True, timeout=timeout,
                           stdin=subprocess.DEVNULL, cwd=cwd)
        rc, err = p.returncode, p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired as e:
        rc, err = "hang", (e.stderr or b"").decode("utf-8", "replace")
    stop.set()
    if t:
        t.join(1)
    # What a run wrote must not feed the next.
    shutil.rmtree(cwd, ignore_errors=True)
    shutil.rmtree(env.out, ignore_errors=True)
    os.mkdir(env.out)
    shutil.rmtree(os.path.dirname(env.missing), ignore_errors=True)
    return rc, err


def shown(v):
    """v as a message names it: escaped control characters."""
    return v.replace("\n", "\\n").replace("\x1b", "\\x1b").replace("\t", "\\t")


def judge(tool, rc, err, expect):
    """The rules rc and err break; expect lists strings the message must name."""
    problems = []
    lines = [l for l in err.splitlines() if l]
    if rc == "hang":
        return ["hang"]
    if PANIC.search(err):
        problems.append("panic")
    if rc == 0:
        return problems + ["accepted"]
    if rc not in (1, 2):
        problems.append("status %s" % rc)
    if len(lines) != 1:
        problems.append("%d lines" % len(lines))
    for l in lines:
        body = l[len(tool) + 2:] if l.startswith(tool + ": ") else l
        if not l.startswith(tool + ": "):
            problems.append("no prefix")
        if body[:1].isupper() and not re.match(r"(Tier|QoS|GPU|NVMe|S3|RAG|MLPerf|ShareGPT|BurstGPT|Mooncake|[A-Z]+\b)", body):
            problems.append("uppercase")
        if GO_INTERNAL.search(l):
            problems.append("go-internal")
    if any(l.startswith(tool + ": b") for l in lines):
        problems.append("value split")
    for e in expect:
        alt = {"--output": "-o", "--io-trace-log": "-o", "--quiet": "-q", "--format": "-f"}.get(e, e)
        if e and not any(x in l or shown(x) in l or repr(x)[1:-1] in l or same_number(x, l)
                         for l in lines for x in (e, alt)):
            problems.append("misses %r" % e)
    return problems


def number(s):
    """s as a number (a fraction, hex and a unit-less float too), or None."""
    try:
        if "/" in s:
            n, d = s.split("/", 1)
            return float(n) / float(d)
        return float(int(s, 0)) if s.lower().startswith(("0x", "-0x")) else float(s)
    except (ValueError, ZeroDivisionError):
        return None


def same_number(v, line):
    """Whether line names the number v in another form (1e+30 for 1e30)."""
    want = number(v)
    if want is None or want != want:
        return False
    for tok in re.findall(r"[-+]?[0-9][0-9.e+-]*", line):
        if number(tok.rstrip(".:")) == want:
            return True
    return False


def cases(binaries, env):
    """(tool, sub, label, args, expect) for every case."""
    for tool, subs in (("kvtrace", [None, "export", "inspect", "models"]),
                       ("kvreplay", [None]), ("kvreport", [None, "merge"])):
        for sub in subs:
            flags = help_flags(binaries[tool], sub)
            base, pos = base_args(tool, sub, env)
            for name, typ in flags:
                for v in values_for(name, typ, env):
                    args = argv(sub, base, pos, name, v, typ)
                    named = v if v else '""'
                    if typ == "bool":
                        named = v[1:] or '""'
                    yield tool, sub, "--%s %r" % (name, v), args, ["--" + name, named]
            # several bad flags at once: every one named?
            bad = [(n, t) for n, t in flags if t in ("int", "float", "bytes", "duration")][:4]
            if len(bad) >= 2:
                args = ([sub] if sub else []) + flat(base, exclude={n for n, _ in bad})
                for n, _ in bad:
                    args += ["--" + n, "-7"]
                yield tool, sub, "several: " + " ".join(n for n, _ in bad), args + pos, ["--" + n for n, _ in bad]
            for p in (env.dir, "/dev/null", env.missing, env.fifo, ""):
                if pos:
                    args = ([sub] if sub else []) + flat(base) + [p]
                    yield tool, sub, "positional %r" % p, args, [p or '""']


def flat(base, exclude=()):
    out = []
    for k, v in base.items():
        if k in exclude:
            continue
        out.append("--" + k)
        if v is not None:
            out.append(v)
    return out


def argv(sub, base, pos, name, v, typ):
    args = ([sub] if sub else []) + flat(base, exclude={name})
    if typ == "bool":
        args.append("--" + name + v)
    else:
        args += ["--" + name, v]
    return args + pos


def main():
    bindir = sys.argv[1]
    verbose = "-v" in sys.argv[2:]
    filt = [a for a in sys.argv[2:] if a != "-v"]
    binaries = {t: os.path.join(bindir, t) for t in ("kvtrace", "kvreplay", "kvreport")}
    env = Env(binaries)
    total = bad = 0
    for tool, sub, label, args, expect in cases(binaries, env):
        name = tool + (" " + sub if sub else "")
        if filt and not any(f in name + " " + label for f in filt):
            continue
        rc, err = run_case(binaries[tool], args, env)
        problems = judge(tool, rc, err, expect)
        total += 1
        first = err.strip().splitlines()[:3]
        if problems or verbose:
            bad += bool(problems and problems != ["accepted"])
            print("%-16s %-44s rc=%-4s %-30s %s" % (name, label[:44], rc, ",".join(problems),
                                                   " | ".join(first)[:220]))
    print("%d cases, %d break a rule (accepted values listed apart)" % (total, bad))


if __name__ == "__main__":
    main()
