# Runs csm stream --engine gpu on the cases of scripts/gpu-fuzz-cases.py and compares
# per-batch positive/negative with the CPU engine's (want.json).
# usage (on the device): python3 scripts/gpu-fuzz.py $OUT carry/bin/csm carry/gcases [deadline_s]
import json, os, subprocess, sys, time
out, C, cases = sys.argv[1], sys.argv[2], sys.argv[3]
deadline = time.time() + float(sys.argv[4] if len(sys.argv) > 4 else 400)
variants = ["zp", "gcsm-persist", "gcsm", "um", "naive", "vsgm"]
stats = {"ok": 0, "bad": 0, "err": 0, "timeout": 0, "skipped": 0}
log = open(f"{out}/gpufuzz.txt", "w")
ids = sorted(os.listdir(cases), key=int)
for i, c in enumerate(ids):
    if time.time() > deadline:
        stats["skipped"] += len(ids) - i; break
    d = f"{cases}/{c}"; w = json.load(open(f"{d}/want.json"))
    for v in (variants[i % 6], variants[(i + 3) % 6]) if i % 2 == 0 else (variants[i % 6],):
        a = [C, "stream", "--engine", "gpu", "--variant", v, "-g", f"{d}/g.graph", "-q", f"{d}/q.graph", "-u", f"{d}/u.txt", "-b", str(w["batch"]), "--json"]
        try:
            p = subprocess.run(a, capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            stats["timeout"] += 1; print("TIMEOUT", c, v, file=log, flush=True); continue
        if p.returncode:
            stats["err"] += 1; print("ERR", c, v, p.stderr[-400:].replace("\n", " | "), file=log, flush=True); continue
        lines = [json.loads(x) for x in p.stdout.strip().splitlines()]
        got = [[j["positive"], j["negative"]] for j in lines if not j.get("summary")]
        if got != w["want"]:
            k = next((k for k in range(min(len(got), len(w["want"]))) if got[k] != w["want"][k]), None)
            stats["bad"] += 1
            print("BAD", c, v, "batch", k, "got", got[k] if k is not None else len(got), "want", w["want"][k] if k is not None else len(w["want"]), " ".join(a), file=log, flush=True)
        else:
            stats["ok"] += 1
print("DONE", stats, file=log, flush=True)
print("DONE", stats)
