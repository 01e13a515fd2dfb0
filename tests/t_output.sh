#!/bin/sh
# tests/t_output.sh -- outputs are all-or-nothing.  After any failure (a bad
# later input, a program error, a scalar refused at run time, an output that
# cannot be written, arrays too large for memory, SIGINT or SIGTERM during a
# long run or while the outputs are being written) no partial output exists,
# existing files are byte for byte untouched and no temporary file is left;
# `--in a=x.npy --out a=x.npy` updates x.npy in place with the right content
# and keeps its permissions.
set -u
JITC=${JITC:-build/jitc}
PYTHON=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
d=$tmp/d
mkdir "$d"

$PYTHON - "$d" <<'PY'
import numpy as np, sys
d = sys.argv[1]
np.save(d + "/x.npy", np.arange(10, dtype=np.float64))
np.save(d + "/y.npy", np.arange(10, dtype=np.float64) * 3)
np.save(d + "/keep.npy", np.full(10, 7.0))
np.save(d + "/big.npy", np.arange(2000000, dtype=np.float64))
with open(d + "/bad.npy", "wb") as f:
    f.write(b"\x93NUMPY\x01\x00\x10\x00{'descr': '<f8'}")   # header cut short
PY
cp "$d/x.npy" "$tmp/x.orig"
cp "$d/y.npy" "$tmp/y.orig"
cp "$d/keep.npy" "$tmp/keep.orig"

# clean NAME: the data files are untouched and no temporary file is left.
clean() {
  why=
  cmp -s "$d/x.npy" "$tmp/x.orig" || why="x.npy changed"
  cmp -s "$d/y.npy" "$tmp/y.orig" || why="$why y.npy changed"
  cmp -s "$d/keep.npy" "$tmp/keep.orig" || why="$why keep.npy changed"
  [ -e "$d/new.npy" ] && why="$why new.npy exists"
  left=$(find "$d" -name '*.tmp*' | head -n 3)
  [ -n "$left" ] && why="$why temporary files left: $left"
  if [ -z "$why" ]; then echo "ok output.$1"; else echo "FAIL output.$1: $why"; fi
}

# fails NAME CODE PATTERN -- COMMAND...: exits CODE with PATTERN on stderr, then clean.
fails() {
  name=$1 code=$2 pattern=$3; shift 4
  "$@" >"$tmp/out" 2>&1
  rc=$?
  if [ $rc -ne "$code" ]; then
    echo "FAIL output.$name: exit $rc, expected $code"; head -c 600 "$tmp/out"; echo; return
  fi
  if ! grep -q -e "$pattern" "$tmp/out"; then
    echo "FAIL output.$name: message lacks '$pattern'"; head -c 600 "$tmp/out"; echo; return
  fi
  clean "$name"
}

for t in interp cpu; do
  if ! $JITC -t $t -q -n 1 --no-cache 'a = 1' >/dev/null 2>&1; then
    echo "skip output.$t: target not available"; continue
  fi
  fails bad_later_input.$t 66 'bad.npy' -- $JITC -t $t -q --in a="$d/x.npy" --in b="$d/bad.npy" \
    --out a="$d/x.npy" --out c="$d/new.npy" 'a += b; c = a'
  fails program_error.$t 65 '<program>:2:8: error:' -- $JITC -t $t -q --in a="$d/x.npy" \
    --out a="$d/x.npy" --out c="$d/new.npy" 'a += 1
c = a +* 2'
  fails run_time_error.$t 64 'does not fit' -- $JITC -t $t -q --dtype i32 -n 10 -D s=3000000000 \
    --out c="$d/new.npy" --out x="$d/x.npy" 'x = i; c = b + s'
  fails unknown_output.$t 64 "no array 'zz'" -- $JITC -t $t -q --in a="$d/x.npy" \
    --out a="$d/x.npy" --out zz="$d/new.npy" 'a += 1'
  fails later_output_unwritable.$t 73 'cannot write' -- $JITC -t $t -q --in a="$d/x.npy" \
    --out a="$d/x.npy" --out c="$d/nodir/c.npy" 'a += 1; c = a'
  mkdir "$d/adir"
  fails later_output_is_dir.$t 73 'directory' -- $JITC -t $t -q --in a="$d/x.npy" \
    --out a="$d/x.npy" --out c="$d/adir" 'a += 1; c = a'
  rmdir "$d/adir"
  # (Under ASan, a failed allocation must return NULL as malloc does, not abort.)
  fails too_large.$t 71 'out of memory: cannot allocate [0-9]* bytes ([0-9.]* TiB) for the arrays of 10000000000000 elements' -- \
    env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1" $JITC -t $t -q -n 10000000000000 --out keep="$d/keep.npy" --out new="$d/new.npy" \
    'keep = a + 1; new = a'
done

# Signals, sent from Python so that SIGINT reaches the child even when this
# script runs in the background (where sh would start it with SIGINT
# ignored).  During a long run: the process dies of the signal and nothing is
# written.  While the outputs are written: whenever the signal lands, the
# outputs are either all new and complete or all untouched, and no temporary
# file is left.
$PYTHON - "$JITC" "$d" "$tmp" <<'PY'
import numpy as np, os, random, signal, subprocess, sys, time
jitc, d, tmp = sys.argv[1:4]

def start(cmd):
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            preexec_fn=lambda: (signal.signal(signal.SIGINT, signal.SIG_DFL),
                                                signal.signal(signal.SIGTERM, signal.SIG_DFL)))

def finish(p):
    try:
        p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        return "did not stop within 60 s of the signal"
    return None

def same(a, b):
    with open(a, "rb") as f, open(b, "rb") as g:
        return f.read() == g.read()

for sig in (signal.SIGINT, signal.SIGTERM):
    name = "output.sig%s.long_run" % sig.name[3:]
    p = start([jitc, "-t", "interp", "-q", "--repeat", "400", "--in", "big=%s/big.npy" % d,
               "--out", "keep=%s/keep.npy" % d, "--out", "new=%s/new.npy" % d,
               "keep = big * 2; new = big"])
    time.sleep(0.5)
    p.send_signal(sig)
    why = finish(p)
    left = [f for f in os.listdir(d) if ".tmp" in f]
    if why or p.returncode != -sig:
        print("FAIL %s: %s (exit %s) %s" % (name, why or "wrong status", p.returncode,
                                             p.stderr.read().decode()[:300]))
    elif not same("%s/keep.npy" % d, "%s/keep.orig" % tmp) or os.path.exists(d + "/new.npy") or left:
        print("FAIL %s: outputs touched, or temporary files left: %s" % (name, left))
    else:
        print("ok " + name)

outs = ["o%d" % k for k in range(6)]
old = np.full(10, 7.0)
def reset():
    for o in outs:
        np.save("%s/%s.npy" % (d, o), old)
cmd = [jitc, "-t", "interp", "-q", "--in", "big=%s/big.npy" % d]
prog = []
for k, o in enumerate(outs):
    cmd += ["--out", "%s=%s/%s.npy" % (o, d, o)]
    prog.append("%s = big + %d" % (o, k))
cmd.append("; ".join(prog))
reset()
t0 = time.time(); subprocess.run(cmd, check=True, timeout=120); full = time.time() - t0
rng = random.Random(7)
bad, counts = [], {"old": 0, "new": 0}
for trial in range(16):
    reset()
    p = start(cmd)
    time.sleep(rng.uniform(0.3, 1.0) * full)
    p.send_signal(signal.SIGINT if trial % 2 else signal.SIGTERM)
    why = finish(p)
    states = []
    for k, o in enumerate(outs):
        a = np.load("%s/%s.npy" % (d, o))
        if a.shape == old.shape and (a == old).all():
            states.append("old")
        elif a.shape == (2000000,) and (a == np.arange(2000000.0) + k).all():
            states.append("new")
        else:
            states.append("corrupt")
    left = [f for f in os.listdir(d) if ".tmp" in f]
    if why or len(set(states)) != 1 or states[0] == "corrupt" or left:
        bad.append("trial %d (exit %d): %s outputs %s, temporary files %s" % (
            trial, p.returncode, why or "", states, left))
    else:
        counts[states[0]] += 1
for o in outs:
    os.unlink("%s/%s.npy" % (d, o))
if bad:
    print("FAIL output.signal_while_writing: " + "; ".join(bad))
else:
    print("ok output.signal_while_writing (%d interrupted before the renames, %d after)" % (
        counts["old"], counts["new"]))
PY

# Every type round trips: `b = a` writes the very bytes np.save writes for the
# input (a bfloat16 file is '<V2', as ml_dtypes saves it, read as bfloat16
# with --dtype a=bfloat16), also in Fortran order and in place.
$PYTHON - "$JITC" "$tmp" <<'PY'
import os, subprocess, sys
import numpy as np
sys.path.insert(0, "tests")  # run from the top directory, as tests/run.sh does
import t_types
jitc, tmp = sys.argv[1:3]
try:
    import ml_dtypes
except ImportError:
    ml_dtypes = None
for row in t_types.table():
    name = row["name"]
    if name == "bfloat16" and not ml_dtypes:
        print("skip output.roundtrip_%s: no ml_dtypes" % name)
        continue
    dt = np.dtype(ml_dtypes.bfloat16 if name == "bfloat16" else name)
    rng = np.random.default_rng(len(name))
    if dt.kind in "iu":
        info = np.iinfo(dt)
        a = rng.integers(info.min, info.max, 24, dtype=dt, endpoint=True)
        a[:2] = [info.min, info.max]
    elif dt.kind == "b":
        a = rng.random(24) < 0.5
    else:
        with np.errstate(over="ignore"):
            a = (rng.standard_normal(24) * 10.0 ** rng.integers(-8, 8, 24)).astype(dt)
        a[:4] = np.array([np.nan, -np.inf, -0.0, 1 / 3]).astype(dt)
    a = np.asfortranarray(a.reshape(4, 6))
    src, out = "%s/rt-%s.npy" % (tmp, name), "%s/rt-%s-out.npy" % (tmp, name)
    np.save(src, a)
    named = ["--dtype", "a=" + name] if name == "bfloat16" else []
    why = None
    for cmd, res in ((["--in", "a=" + src, "--out", "b=" + out, "b = a"], out),
                     (["--in", "a=" + src, "--out", "a=" + src, "a[i] = a"], src)):
        p = subprocess.run([jitc, "-t", "interp", "-q"] + named + cmd, capture_output=True,
                           text=True)
        ref = "%s/ref.npy" % tmp
        np.save(ref, a)
        if p.returncode != 0:
            why = "exit %d: %s" % (p.returncode, p.stderr.strip()[:300])
        elif open(res, "rb").read() != open(ref, "rb").read():
            why = "%s differs from np.save's bytes" % os.path.basename(res)
        elif name == "bfloat16" and not (np.load(res).view(dt).view(np.uint16) ==
                                         a.view(np.uint16)).all():
            why = "np.load(f).view(ml_dtypes.bfloat16) differs"
    print("FAIL output.roundtrip_%s: %s" % (name, why) if why else "ok output.roundtrip_%s" % name)
PY

# In place: the content is right, the permissions are kept, nothing is left.
chmod 640 "$d/x.npy"
for t in interp cpu; do
  $JITC -t $t -q --in a="$d/x.npy" --out a="$d/x.npy" 'a = a * 2 + 1' >"$tmp/out" 2>&1 ||
    { echo "FAIL output.in_place.$t: $(cat "$tmp/out")"; continue; }
  $PYTHON -c "
import numpy as np, sys
x = np.load('$d/x.npy')
sys.exit(0 if x.dtype == np.float64 and (x == np.arange(10.0) * 2 + 1).all() else repr(x))
" && [ "$(stat -c %a "$d/x.npy")" = 640 ] && [ -z "$(find "$d" -name '*.tmp*')" ] &&
    echo "ok output.in_place.$t" || echo "FAIL output.in_place.$t: mode $(stat -c %a "$d/x.npy")"
  cp "$tmp/x.orig" "$d/x.npy"
  chmod 640 "$d/x.npy"
done
exit 0
