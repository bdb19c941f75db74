# Generates GPU fuzz cases with the CPU engine's expected per-batch results.
# usage: python3 scripts/gpu-fuzz-cases.py CSM N BASE OUTDIR [large]  (here; then copy OUTDIR into carry/)
# `large`: queries of 9-32 vertices, half of them induced (the kernel's wide and huge builds)
import random, subprocess, json, sys, os
C = sys.argv[1]; N = int(sys.argv[2]); base = int(sys.argv[3]); out = sys.argv[4]
large = len(sys.argv) > 5 and sys.argv[5] == "large"
os.makedirs(out, exist_ok=True)
def run(a, t=60): return subprocess.run(a, capture_output=True, text=True, timeout=t)
made = 0
for it in range(N):
    s = base + it; r = random.Random(s); d = f"{out}/{s}"; os.makedirs(d, exist_ok=True)
    vertex_ops = r.random() < 0.35
    n = r.choice([16, 32, 64, 128, 256, 512]) if not vertex_ops else r.choice([12, 20, 40, 80])
    m = int(n * r.choice([1.5, 3, 5, 8])); m = min(m, n * (n - 1) // 2 - 1)
    L = r.choice([1, 1, 2, 3, 4, 8]); EL = r.choice([0, 0, 0, 2, 3])
    g = [C, "gen", "graph", "--kind", r.choice(["rmat", "rmat", "er", "grid"]), "-n", str(n), "-m", str(m), "--labels", str(L), "-s", str(s), "-o", f"{d}/full.graph"]
    if EL: g += ["--edge-labels", str(EL)]
    if r.random() < 0.25 and L > 1: g += ["--zipf", "1.2"]
    if run(g).returncode: continue
    if large:
        k = r.choice([9, 10, 12, 16, 20, 24, 32])
    else:
        k = r.choice([3, 4, 5, 6, 7, 8]) if r.random() < 0.8 else r.choice([9, 10, 12])
    q = [C, "gen", "query", "-g", f"{d}/full.graph", "-k", str(k), "-s", str(s), "-o", f"{d}/q.graph"]
    if r.random() < (0.5 if large else 0.3): q.append("--dense")
    if run(q).returncode: subprocess.run(["rm", "-rf", d]); continue
    if not vertex_ops:
        frac = r.choice([0.1, 0.3, 0.6]); ins = r.choice([0.5, 0.5, 0.2, 0.9])
        p = run([C, "gen", "stream", "-g", f"{d}/full.graph", "--fraction", str(frac), "--insert-prob", str(ins), "-s", str(s), "-o", f"{d}/u.txt", "--initial", f"{d}/g.graph"])
        if p.returncode: subprocess.run(["rm", "-rf", d]); continue
        os.remove(f"{d}/full.graph")
    else:
        os.rename(f"{d}/full.graph", f"{d}/g.graph")
        V = {}; E = {}
        for line in open(f"{d}/g.graph"):
            f = line.split()
            if f[0] == "v": V[int(f[1])] = int(f[2])
            elif f[0] == "e": E[(min(int(f[1]), int(f[2])), max(int(f[1]), int(f[2])))] = int(f[3]) if len(f) > 3 else 0
        ups = []; nextid = max(V) + 1; removed = {}
        for _ in range(r.choice([20, 60, 150])):
            x = r.random(); vs = list(V)
            if x < 0.45 and len(vs) > 1:
                a, b = r.sample(vs, 2); key = (min(a, b), max(a, b))
                if key in E: continue
                l = r.randrange(EL) if EL else 0
                E[key] = l; ups.append(f"e {a} {b} {l}")
            elif x < 0.85 and E:
                key, l = r.choice(list(E.items())); del E[key]
                ups.append(f"-e {key[0]} {key[1]} {l}")
            elif x < 0.93:
                v = nextid; nextid += 1
                V[v] = r.randrange(L); ups.append(f"v {v} {V[v]}")
            elif vs:
                v = r.choice(vs); lab = V.pop(v)
                for key in [kk for kk in E if v in kk]: del E[key]
                ups.append(f"-v {v} {lab}")
        open(f"{d}/u.txt", "w").write("\n".join(ups) + "\n")
    b = r.choice([1, 2, 7, 64, 256, 1000, 4096])
    try:
        p = run([C, "stream", "-g", f"{d}/g.graph", "-q", f"{d}/q.graph", "-u", f"{d}/u.txt", "-b", str(b), "-t", "2", "--json"], 10)
    except subprocess.TimeoutExpired:
        subprocess.run(["rm", "-rf", d]); continue
    if p.returncode:
        subprocess.run(["rm", "-rf", d]); continue
    lines = [json.loads(x) for x in p.stdout.strip().splitlines()]
    want = [[j["positive"], j["negative"]] for j in lines if not j.get("summary")]
    json.dump({"batch": b, "want": want, "summary": [lines[-1]["positive"], lines[-1]["negative"]]}, open(f"{d}/want.json", "w"))
    made += 1
print("made", made)
