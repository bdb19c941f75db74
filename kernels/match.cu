// Incremental (and static) subgraph matching kernel (match v17; docs/GPU_NOTES.md).
//
// GCSM Sec. V-C: the nested loops of Fig. 2 run on the GPU, STMatch-style:
//
// * one warp per seed (a batch edge orientation bound to a delta plan's seed
//   edge, or one start vertex of a static plan), fetched dynamically with an
//   atomicAdd on a global seed counter;
// * a per-warp DFS stack over the plan's levels; each level keeps a candidate
//   buffer of at most `chunk` vertices in a per-warp slice of global memory
//   and a cursor into the list it iterates, so candidate sets of any size are
//   produced chunk by chunk;
// * warp-cooperative intersection: each lane takes one element of the
//   smallest list and binary-searches the other lists; ballot/popc compact the
//   survivors into the candidate buffer;
// * lists are read in the version the plan names: Old = the old part, marks
//   ignored; Common = the old part minus marked entries; New = Common plus the
//   appended part (N' = N u dN, Sec. V-C);
// * the last level is counted, not enumerated;
// * every list lookup first asks the DCSR cache (device memory, Fig. 6)
//   through a per-vertex slot map (one load; binary search of rowidx when
//   there is no map); otherwise it follows the vertex table's device pointer
//   (pDevice of Sec. V-A) into pinned host memory (zero-copy), managed memory
//   (UM) or device memory (static mode). Host lists are staged into a
//   per-warp device buffer with coalesced 128-B loads (UNR in flight per
//   lane) when short, or when they belong to a vertex bound before the
//   previous level (then a run of siblings copies them once); others are
//   binary-searched in place. Every element loaded from a host list adds 4
//   bytes to the per-lane "counted" host-byte counter.
// * match v4: a long host list that is not staged is tested a block of
//   32 * UNR candidates at a time through a *window*: the warp finds where
//   the block's smallest and largest candidates fall in the list with a
//   cooperative search (gallop, then 32-ary: a few round trips instead of
//   log2(len) dependent probes per candidate), copies that range into the
//   free part of the level's staging area with coalesced loads, and the
//   lanes binary-search the copy in device memory. Candidates past the
//   window (it is capped) fall back to the per-lane search.
// * match v5: a node below its task's start level whose iterated list has
//   at least `defer_min` elements is not expanded by the warp that reaches
//   it: the warp writes it out as tasks, one per slice of `defer_slice`
//   elements of that level, into the `defer` buffer, and moves on to its
//   next sibling. The host runs those tasks in a next launch (where every
//   warp takes a share), so one heavy node deep in a subtree no longer
//   keeps one warp busy while the others idle (the kernel's tail).
// * match v11: "long" is counted in candidates of the level's label: with
//   the level's label share in its plan block, a node is deferred from
//   `defer_wanted / share` elements (see defer_node).
// * match v13: a lane tests its UNR candidates against a list by UNR
//   binary searches in lockstep (lower_bounds_lockstep): their loads are
//   in flight together, one round trip per halving step instead of UNR.
//   This serves device lists (cached, staged), searches inside a window and
//   host lists searched in place (Params.lockstep; 0: v12's searches).
// * match v14: once a launch's tasks have all been taken (the task counter
//   is past nseeds), nodes are deferred from `defer_drained` candidates
//   instead of `defer_wanted` (see defer_node).
// * match v17: the last level's count is cached by its read bindings in a
//   device hash table shared by every warp of a run (the last-level memo,
//   see memo_key and the main loop): a node whose lists were counted
//   before takes the cached count and subtracts the conflicts that fall
//   inside its candidate set, instead of intersecting the lists again. By
//   default only for plans that check no vertex label (unlabelled graphs)
//   and nodes whose iterated list has at least memo_min elements.
//
// Compiled at run time by NVRTC (crates/gpu/src/nvrtc.rs); no headers.

typedef unsigned int u32;
typedef unsigned long long u64;

// Query vertices (plan depth) supported: 8, or 16 in the build the host
// compiles with `#define MAXQ 16` ahead of this file for queries of 9-16
// vertices, or 32 with 15 reads a level and one warp a block in the build
// it compiles with `#define MAXQ 32`, `MAXR 15`, `WARPS 1` (crates/gpu/src/
// plan.rs Shape; the per-warp state below grows from about 3 KB to 6 KB
// and 27 KB of shared memory).
#ifndef MAXQ
#define MAXQ 8
#endif
#ifndef MAXR
#define MAXR 7          // reads per level (bound neighbours of a vertex)
#endif
#ifndef WARPS
#define WARPS 4         // warps per block (block = WARPS * 32 threads)
#endif
#define NONE 0xffffffffu
#define MARK 0x80000000u
#define VOLD 0u
#define VCOMMON 1u
#define VNEW 2u
#define FULL 0xffffffffu
#define HOT 0x80000000u  // VEntry.len: the list was copied to device memory (match v12)

// Plan layout (u32 words), PLAN_WORDS per plan:
//   [0] depth (low 16 bits; the host's build tag above)
//   [1] start depth (2 for delta plans, 1 for static plans)
//   [2] sign (0 = positive, 1 = negative)  [3] check_labels
//   level d at PLAN_HEADER + d * LEVEL_WORDS:
//     [0] vertex label  [1] number of reads  [2] number of conflicts
//     [3] label share (16.16 fixed point; 0 = unknown; match v11)
//     [4 .. 4+MAXR)          reads: pos | version << 8
//     [4+MAXR .. 4+2*MAXR)   read edge labels (NONE = any)
//     [4+2*MAXR .. +MAXQ)    conflict positions
//     [4+2*MAXR+MAXQ]        memo key length (match v17; 0 = not memoised)
#define PLAN_HEADER 4
#define LEVEL_WORDS ((4 + 2 * MAXR + MAXQ + 1 + 3) & ~3)  // through L_MEMO: 28 for MAXQ 8, 36 for 16, 68 for 32/15
#define PLAN_WORDS (PLAN_HEADER + MAXQ * LEVEL_WORDS)
#define L_READS 4
#define L_ELABELS (4 + MAXR)
#define L_CONFS (4 + 2 * MAXR)
#define L_MEMO (L_CONFS + MAXQ)  // a spare word of every build's level block
#define MEMO_KEY 3               // most bindings in a memo key
#define MEMO_WORDS 8             // words per memo slot

// One vertex-table entry (24 bytes; crates/gpu/src/host_graph.rs VEntry).
struct VEntry {
    u64 ids;   // device address of the raw list: old part (marks) then appended part
    u64 labs;  // device address of the parallel edge labels (0 without edge labels)
    u32 base;  // length of the old part
    u32 len;   // old part + appended part
};

// Kernel parameters (crates/gpu/src/matcher.rs MatchParams): all 64-bit.
struct Params {
    u64 plans, nplans;
    u64 seeds, nseeds, implicit_seeds;
    u64 vtab, nvert, vlabels, host_counts;
    u64 rowidx, rowptr, colidx, collab, ncached;
    u64 slots, nslots;  // per-vertex cache slot + 1 (0 = not cached); 0 = binary-search rowidx
    u64 cand, chunk, stage, stage_words;
    u64 counter, out;
    u64 time_limit_ns;  // 0 = none; else warps stop fetching seeds after this long
    u64 window_min;     // 0 = no windows; else host lists with an old part this long use them
    u64 window_max;     // largest window (words)
    u64 defer;          // task buffer for deferred heavy nodes (12 words each); 0 = no deferral
    u64 defer_cap;      // tasks it holds
    u64 defer_min;      // defer nodes whose iterated list has at least this many elements
    u64 defer_slice;    // elements of that list per deferred task
    u64 defer_wanted;   // match v11: levels with a label share defer from defer_wanted / share elements
    u64 lockstep;       // match v13: a lane's UNR membership searches run in lockstep (0: one after another)
    u64 defer_drained;  // match v14: once the launch's tasks are all taken, defer from this many candidates (0: off)
    u64 memo;           // match v17: last-level memo table (MEMO_WORDS words a slot); 0 = no memo
    u64 memo_mask;      // slots - 1 (a power of two)
    u64 memo_epoch;     // this run's epoch: slots of other epochs are empty
    u64 memo_min;       // memoise last-level nodes whose iterated list has at least this many elements
    u64 memo_defer;     // 1: a memo miss defers as any node; 0: only once the launch's tasks are all taken
    u64 memo_labelled;  // 1: memoise plans that check vertex labels too; 0: only unlabelled ones
};

// Output slots (u64): see matcher.rs OUT_*.
#define OUT_POS 0
#define OUT_NEG 1
#define OUT_HOST_BYTES 2
#define OUT_HOST_LISTS 3
#define OUT_CACHE_LISTS 4
#define OUT_STAGED_LISTS 5
#define OUT_NODES 6
#define OUT_ABORTED 7
#define OUT_MEMO_HITS 8
#define OUT_MEMO_MISSES 9
#define OUT_DEFERRED 10  // tasks deferred by this launch (reset per launch)
#define OUT_COUNTER 11   // the launch's task counter: p.counter points here (reset per launch)
#define OUT_WORDS 12

// Words per task (crates/gpu/src/plan.rs TASK_WORDS): plan, weight, lo, hi,
// start, then the prefix v0..v6.
#define TASK_WORDS 12
#define TASK_PREFIX 7

struct ListRef {
    const u32* ids;
    const u32* labs;
    u32 base, len, ver, elabel, host, dom;
};

struct WarpState {
    ListRef lists[MAXQ][MAXR];
    u32 emb[MAXQ];
    u32 pos[MAXQ];    // cursor into the iterated list's domain
    u32 dom[MAXQ];    // domain size of the iterated list
    u32 ncand[MAXQ];  // candidates in the buffer
    u32 idx[MAXQ];    // next candidate to expand
    u32 sm[MAXQ];     // index of the iterated (smallest) read
    u32 used[MAXQ];   // words of the level's staging area holding staged lists
    // What the level's staging area holds: per read, the vertex whose raw
    // list was copied (NONE: nothing), at which word offset, how many words.
    // Host lists do not change during a launch, so a list that stays the
    // same across siblings (it depends on earlier levels only) is copied once.
    u32 stv[MAXQ][MAXR];
    u32 sto[MAXQ][MAXR];
    u32 stw[MAXQ][MAXR];
};

#define UNR 4  // loads in flight per lane when streaming a list

__device__ __forceinline__ u64 global_ns() {
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ u64 warp_sum64(u64 v) {
    for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(FULL, v, d);
    return v;
}

// Where v's list lives: the DCSR cache (binary search of rowidx, Fig. 6) or
// the vertex table (pDevice).
__device__ ListRef resolve_list(const Params& p, u32 v, u32 ver, u32 elabel, u64& cache_hits,
                                u64& host_lists) {
    ListRef r;
    r.ver = ver;
    r.elabel = elabel;
    bool found = false;
    if (p.ncached) {
        u32 lo;
        bool hit;
        if (p.slots) {
            // Per-vertex slot map: one load per lookup.
            const u32 s = (v < (u32)p.nslots) ? __ldg((const u32*)p.slots + v) : 0u;
            hit = s != 0;
            lo = s - 1;
        } else {
            const u32* rowidx = (const u32*)p.rowidx;
            lo = 0;
            u32 hi = (u32)p.ncached;
            while (lo < hi) {
                const u32 mid = (lo + hi) >> 1;
                if (__ldg(rowidx + mid) < v) lo = mid + 1; else hi = mid;
            }
            hit = lo < (u32)p.ncached && __ldg(rowidx + lo) == v;
        }
        if (hit) {
            const u32* rowptr = (const u32*)p.rowptr;
            const u32 s = __ldg(rowptr + 2 * lo);
            const u32 a = __ldg(rowptr + 2 * lo + 1);
            const u32 e = __ldg(rowptr + 2 * lo + 2);
            r.ids = (const u32*)p.colidx + s;
            r.labs = p.collab ? (const u32*)p.collab + s : (const u32*)0;
            r.len = e - s;
            r.base = (a == NONE) ? r.len : a - s;
            r.host = 0;
            found = true;
            ++cache_hits;
        }
    }
    if (!found) {
        const VEntry* t = (const VEntry*)p.vtab + v;
        r.ids = (const u32*)t->ids;
        r.labs = (const u32*)t->labs;
        r.base = t->base;
        const u32 len = t->len;
        r.len = len & ~HOT;
        // match v12: a hot list (gather_lists) is in device memory
        r.host = (len & HOT) ? 0u : (u32)p.host_counts;
        if (r.host) ++host_lists;
    }
    r.dom = (ver == VNEW) ? r.len : r.base;
    return r;
}

// First index in [lo, hi) whose value (marks stripped) is >= x.
__device__ __forceinline__ u32 lower_bound_marked(const u32* l, u32 lo, u32 hi, u32 x, u32& probes) {
    while (lo < hi) {
        const u32 mid = (lo + hi) >> 1;
        ++probes;
        if ((l[mid] & ~MARK) < x) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// Whether x is in list L (in L's version, with L's edge label), given
// i = the first index of L's old part whose value is >= x (L.base if none)
// and the probes that search cost.
__device__ __forceinline__ bool member_at(const ListRef& L, u32 x, u32 i, u32 probes, u64& bytes,
                                          const u32* win = 0, u32 wa = 0, u32 wb = 0) {
    bool found = false;
    bool done = false;
    if (i < L.base) {
        u32 e;
        if (i >= wa && i < wb) {
            e = win[i - wa];  // the window's copy (device memory)
        } else {
            e = L.ids[i];
            ++probes;
        }
        if ((e & ~MARK) == x && (!(e & MARK) || L.ver == VOLD)) {
            // Present in this version; an unmarked old entry excludes an
            // appended copy, so the answer is final.
            found = true;
            done = true;
            if (L.elabel != NONE) {
                ++probes;
                found = L.labs[i] == L.elabel;
            }
        }
    }
    if (!done && L.ver == VNEW && L.len > L.base) {
        i = lower_bound_marked(L.ids, L.base, L.len, x, probes);
        if (i < L.len) {
            ++probes;
            if (L.ids[i] == x) {
                found = true;
                if (L.elabel != NONE) {
                    ++probes;
                    found = L.labs[i] == L.elabel;
                }
            }
        }
    }
    if (L.host) bytes += 4ull * probes;
    return found;
}

// Whether x is in list L (in L's version, with L's edge label).
__device__ bool member(const ListRef& L, u32 x, u64& bytes) {
    u32 probes = 0;
    const u32 i = lower_bound_marked(L.ids, 0, L.base, x, probes);
    return member_at(L, x, i, probes, bytes);
}

// Match v13: the lower bounds of a lane's UNR candidates x[j] (where act[j])
// in l[lo, hi), searched in lockstep. Each step halves every search's range
// without a branch on the outcome (the range keeps n - n/2 entries either
// way), so all searches take the same ceil(log2(hi - lo)) + 1 steps and a
// step issues its UNR loads together: one round trip per step instead of
// UNR dependent ones (`lower_bound_marked` run once per candidate).
// i[j] = the first index in [lo, hi) whose value (marks stripped) is >=
// x[j], hi if none. Returns the probes each active search made.
__device__ __forceinline__ u32 lower_bounds_lockstep(const u32* l, u32 lo, u32 hi, const u32 (&x)[UNR],
                                                     const bool (&act)[UNR], u32 (&i)[UNR]) {
#pragma unroll
    for (u32 j = 0; j < UNR; ++j) i[j] = lo;
    u32 n = hi > lo ? hi - lo : 0u;
    if (n == 0) return 0;
    u32 probes = 1;
    // Invariant: the lower bound of x[j] lies in [i[j], i[j] + n].
    while (n > 1) {
        const u32 half = n >> 1;
        u32 e[UNR];
#pragma unroll
        for (u32 j = 0; j < UNR; ++j) e[j] = act[j] ? l[i[j] + half] : 0u;
#pragma unroll
        for (u32 j = 0; j < UNR; ++j)
            if (act[j] && (e[j] & ~MARK) < x[j]) i[j] += half;
        n -= half;
        ++probes;
    }
    u32 e[UNR];
#pragma unroll
    for (u32 j = 0; j < UNR; ++j) e[j] = act[j] ? l[i[j]] : 0u;
#pragma unroll
    for (u32 j = 0; j < UNR; ++j)
        if (act[j] && (e[j] & ~MARK) < x[j]) i[j] += 1;
    return probes;
}

// Membership of a lane's block of candidates in L (ok[j] cleared for those
// not in it): lockstep searches (match v13) or one search per candidate.
__device__ __forceinline__ void members_block(const Params& p, const ListRef& L, const u32 (&c)[UNR],
                                              bool (&ok)[UNR], u64& bytes) {
    if (p.lockstep) {
        u32 i[UNR];
        const u32 probes = lower_bounds_lockstep(L.ids, 0, L.base, c, ok, i);
#pragma unroll
        for (u32 j = 0; j < UNR; ++j)
            if (ok[j]) ok[j] = member_at(L, c[j], i[j], probes, bytes);
    } else {
#pragma unroll
        for (u32 j = 0; j < UNR; ++j)
            if (ok[j]) ok[j] = member(L, c[j], bytes);
    }
}

// Warp-cooperative lower bound (x and the range warp-uniform): the first
// index in [lo, hi) of l whose value (marks stripped) is >= x, hi if none.
// A gallop (lane k probes lo + 2^k - 1) brackets it in one round trip, then
// 32-ary steps (32 probes in flight) narrow it: about log32 of the distance
// round trips instead of log2(hi - lo) dependent ones.
__device__ u32 warp_lower_bound(const u32* l, u32 lo, u32 hi, u32 x, u32 lane, u64& bytes) {
    if (lo >= hi) return lo;
    {
        const u64 q = (u64)lo + ((1ull << lane) - 1ull);
        const bool valid = q < hi;
        const bool lt = valid && (l[q] & ~MARK) < x;
        if (valid) bytes += 4;
        const u32 t = __popc(__ballot_sync(FULL, lt));
        u32 nhi = hi;
        if (t < 32) {
            const u64 qt = (u64)lo + ((1ull << t) - 1ull);
            if (qt < hi) nhi = (u32)qt;
        }
        lo = t ? lo + (1u << (t - 1)) : lo;
        hi = nhi;
    }
    while (lo < hi) {
        const u32 step = (hi - lo + 31u) >> 5;
        const u64 q = (u64)lo + (u64)(lane + 1) * step - 1ull;
        const bool valid = q < hi;
        const bool lt = valid && (l[q] & ~MARK) < x;
        if (valid) bytes += 4;
        const u32 t = __popc(__ballot_sync(FULL, lt));
        u32 nhi = hi;
        if (t < 32) {
            const u64 qt = (u64)lo + (u64)(t + 1) * step - 1ull;
            if (qt < hi) nhi = (u32)qt;
        }
        lo = lo + t * step;
        hi = nhi;
    }
    return lo;
}

__device__ __forceinline__ u32 warp_min(u32 v) {
    for (int d = 16; d > 0; d >>= 1) v = min(v, __shfl_xor_sync(FULL, v, d));
    return v;
}

__device__ __forceinline__ u32 warp_max(u32 v) {
    for (int d = 16; d > 0; d >>= 1) v = max(v, __shfl_xor_sync(FULL, v, d));
    return v;
}

// Element i of the iterated list S's domain, already loaded as e (S.ids[i]),
// if it belongs to S's version and carries S's edge label.
__device__ __forceinline__ bool element_of(const ListRef& S, u32 i, u32 e, u32& c, u64& bytes) {
    u32 loads = 1;
    bool ok;
    if (i < S.base) {
        ok = !(e & MARK) || S.ver == VOLD;
        c = e & ~MARK;
    } else {
        ok = true;
        c = e;
    }
    if (ok && S.elabel != NONE) {
        ++loads;
        ok = S.labs[i] == S.elabel;
    }
    if (S.host) bytes += 4ull * loads;
    return ok;
}

// Label, injectivity and membership tests of a block of candidates of level
// d: lane-local c[j] where ok[j] (warp-wide call; ok[j] is cleared for the
// rejected ones). Device-resident lists (cached, staged) first: a cheap
// rejection saves the zero-copy probes of the host lists. A long host list
// is searched through a window (see the header) when that saves round trips.
__device__ void block_accept(const Params& p, const WarpState& ws, const u32* lv, u32 d, u32 lane, u32 checkl,
                             u32 nconf, const u32 (&c)[UNR], bool (&ok)[UNR], u32* win, u64& bytes) {
#pragma unroll
    for (u32 j = 0; j < UNR; ++j) {
        if (!ok[j]) continue;
        if (checkl && __ldg((const u32*)p.vlabels + c[j]) != lv[0]) { ok[j] = false; continue; }
        for (u32 q = 0; q < nconf; ++q)
            if (ws.emb[lv[L_CONFS + q]] == c[j]) ok[j] = false;
    }
    const u32 nr = lv[1];
    const u32 sm = ws.sm[d];
    for (u32 k = 0; k < nr; ++k) {
        if (k == sm || ws.lists[d][k].host) continue;
        members_block(p, ws.lists[d][k], c, ok, bytes);
    }
    const u32 cap = (u32)p.stage_words;
    const u32 used = ws.used[d];
    u32 wcap = cap > used ? cap - used : 0u;
    if (wcap > (u32)p.window_max) wcap = (u32)p.window_max;
    for (u32 k = 0; k < nr; ++k) {
        if (k == sm || !ws.lists[d][k].host) continue;
        const ListRef L = ws.lists[d][k];
        // Per-lane searches cost about log2(base) dependent round trips per
        // occupied candidate slot j; a window about 6 plus the copy.
        u32 nj = 0, vmin = NONE, vmax = 0;
#pragma unroll
        for (u32 j = 0; j < UNR; ++j) {
            nj += __any_sync(FULL, ok[j]) ? 1u : 0u;
            if (ok[j]) {
                vmin = min(vmin, c[j]);
                vmax = max(vmax, c[j]);
            }
        }
        if (nj == 0) break;  // every candidate rejected
        const u32 lg = 32u - __clz(L.base | 1u);
        if (p.window_min && L.base >= (u32)p.window_min && wcap >= 32 && (nj * lg > 16 || p.window_min == 1)) {
            vmin = warp_min(vmin);
            vmax = warp_max(vmax);
            const u32 a = warp_lower_bound(L.ids, 0, L.base, vmin, lane, bytes);
            const u32 lim = (L.base - a > wcap) ? a + wcap : L.base;
            const u32 b0 = warp_lower_bound(L.ids, a, lim, vmax, lane, bytes);
            // The window [a, b) holds the lower bound of every x <= vmax when
            // b0 < lim, else of every x <= last value of the window.
            const u32 b = (b0 < lim) ? b0 + 1 : lim;
            const u32 n = b - a;
            for (u32 i0 = 0; i0 < n; i0 += 32 * UNR) {
                u32 r[UNR];
#pragma unroll
                for (u32 j = 0; j < UNR; ++j) {
                    const u32 i = i0 + j * 32 + lane;
                    r[j] = (i < n) ? L.ids[a + i] : 0u;
                }
#pragma unroll
                for (u32 j = 0; j < UNR; ++j) {
                    const u32 i = i0 + j * 32 + lane;
                    if (i < n) win[i] = r[j];
                }
            }
            bytes += (lane == 0) ? 4ull * n : 0ull;
            __syncwarp();
            const u32 wlast = n ? (win[n - 1] & ~MARK) : 0u;
            // match v13: the searches inside the window in lockstep
            bool inw[UNR];
            u32 wi[UNR];
#pragma unroll
            for (u32 j = 0; j < UNR; ++j) inw[j] = p.lockstep && ok[j] && n && c[j] <= wlast;
            if (p.lockstep) lower_bounds_lockstep(win, 0, n, c, inw, wi);
#pragma unroll
            for (u32 j = 0; j < UNR; ++j) {
                if (!ok[j]) continue;
                const u32 x = c[j];
                u32 probes = 0;
                u32 i;
                if (inw[j]) {
                    i = a + wi[j];
                } else if (n && x <= wlast) {
                    // lower bound inside the window (device memory, not counted)
                    u32 lo = 0, hi = n;
                    while (lo < hi) {
                        const u32 mid = (lo + hi) >> 1;
                        if ((win[mid] & ~MARK) < x) lo = mid + 1; else hi = mid;
                    }
                    i = a + lo;
                } else {
                    i = lower_bound_marked(L.ids, b, L.base, x, probes);
                }
                ok[j] = member_at(L, x, i, probes, bytes, win, a, b);
            }
            __syncwarp();  // the next read's window overwrites this one
        } else {
            members_block(p, L, c, ok, bytes);
        }
    }
}

// Resolves the lists of level d for the current prefix and picks the
// smallest as the iterated one (ws.sm[d]; its domain size in ws.dom[d]).
__device__ void resolve_level(const Params& p, WarpState& ws, const u32* lv, u32 d, u32 lane, u64& cache_hits,
                              u64& host_lists) {
    const u32 nr = lv[1];
    if (lane < nr) {
        const u32 rd = lv[L_READS + lane];
        const u32 v = ws.emb[rd & 0xffu];
        ws.lists[d][lane] = resolve_list(p, v, rd >> 8, lv[L_ELABELS + lane], cache_hits, host_lists);
    }
    __syncwarp();
    u32 sm = 0, best = NONE;
    for (u32 k = 0; k < nr; ++k) {
        const u32 dk = ws.lists[d][k].dom;
        if (dk < best) { best = dk; sm = k; }
    }
    __syncwarp();
    if (lane == 0) {
        ws.sm[d] = sm;
        ws.dom[d] = (nr > 0) ? best : 0;
    }
    __syncwarp();
}

// Stages short host lists of the resolved level d into the warp's buffer
// and resets the level's cursor.
__device__ void stage_level(const Params& p, WarpState& ws, const u32* lv, u32 d, u32 lane, u32 start,
                            u32* stage, u64& bytes, u64& staged) {
    const u32 nr = lv[1];
    const u32 sm = ws.sm[d];
    const u32 best = ws.dom[d];
    // Stage the other host lists while they fit (coalesced 128-B loads, UNR
    // in flight per lane), unless the area already holds the same list at
    // the same place (a list fixed across siblings is copied once).
    u32 used = 0;
    const u32 cap = (u32)p.stage_words;
    u32* area = stage + (u64)d * cap;
    // This node's staging and windows overwrite the level's area, and the
    // loop below keeps ws.stv[d][k] true only for k < nr. A read k >= nr
    // belongs to another plan whose level d has more reads: its record may
    // name a copy this node overwrites, and a later node of that plan
    // (same vertices, same offsets) would take the stale copy for its own.
    // Thirty-fifth session: a warp that took tasks of two plans in that
    // order counted 47 embeddings too few, once in about 60 runs.
    if (lane >= nr && lane < MAXR) ws.stv[d][lane] = NONE;
    __syncwarp();
    for (u32 k = 0; k < nr; ++k) {
        const ListRef L = ws.lists[d][k];
        const u32 words = (L.elabel != NONE) ? 2 * L.len : L.len;
        const u32 v = ws.emb[lv[L_READS + k] & 0xffu];
        const bool reuse = ws.stv[d][k] == v && ws.sto[d][k] == used && ws.stw[d][k] == words;
        // Copying costs about len / (32 * UNR) round trips; searching in
        // place about log2(len) per 32 iterated elements. Long lists are
        // staged only against long iterated lists (or when already there).
        // A list of an earlier vertex than d - 1 is the same for every
        // sibling of level d - 1 (and read whole when it is the iterated
        // one): staged, it is read from the host once.
        const bool fixed = (lv[L_READS + k] & 0xffu) + 1 < d && d > start;
        const bool worth = reuse || fixed || (k != sm && (L.len <= 1024 || L.len <= 64 * best));
        if (!L.host || L.len == 0 || used + words > cap || !worth) {
            __syncwarp();
            if (lane == 0) ws.stv[d][k] = NONE;
            continue;
        }
        u32* dst = area + used;
        if (!reuse) {
            for (u32 b = 0; b < L.len; b += 32 * UNR) {
                u32 r[UNR];
#pragma unroll
                for (u32 j = 0; j < UNR; ++j) {
                    const u32 i = b + j * 32 + lane;
                    r[j] = (i < L.len) ? L.ids[i] : 0u;
                }
#pragma unroll
                for (u32 j = 0; j < UNR; ++j) {
                    const u32 i = b + j * 32 + lane;
                    if (i < L.len) dst[i] = r[j];
                }
            }
            if (L.elabel != NONE) {
                for (u32 b = 0; b < L.len; b += 32 * UNR) {
                    u32 r[UNR];
#pragma unroll
                    for (u32 j = 0; j < UNR; ++j) {
                        const u32 i = b + j * 32 + lane;
                        r[j] = (i < L.len) ? L.labs[i] : 0u;
                    }
#pragma unroll
                    for (u32 j = 0; j < UNR; ++j) {
                        const u32 i = b + j * 32 + lane;
                        if (i < L.len) dst[L.len + i] = r[j];
                    }
                }
            }
            if (lane == 0) {
                bytes += 4ull * words;
                ++staged;
            }
        }
        __syncwarp();
        if (lane == 0) {
            ws.lists[d][k].ids = dst;
            ws.lists[d][k].labs = (L.elabel != NONE) ? dst + L.len : (const u32*)0;
            ws.lists[d][k].host = 0;
            ws.stv[d][k] = v;
            ws.sto[d][k] = used;
            ws.stw[d][k] = words;
        }
        used += words;
    }
    __syncwarp();
    if (lane == 0) {
        ws.used[d] = used;
        ws.pos[d] = 0;
        ws.ncand[d] = 0;
        ws.idx[d] = 0;
    }
    __syncwarp();
}

// resolve_level, then stage_level.
__device__ void enter_level(const Params& p, WarpState& ws, const u32* lv, u32 d, u32 lane,
                            u32 start, u32* stage, u64& bytes, u64& cache_hits, u64& host_lists,
                            u64& staged) {
    resolve_level(p, ws, lv, d, lane, cache_hits, host_lists);
    stage_level(p, ws, lv, d, lane, start, stage, bytes, staged);
}

// Next chunk of level d's candidates into the warp's buffer.
__device__ void fill_chunk(const Params& p, WarpState& ws, const u32* lv, u32 d, u32 lane,
                           u32 checkl, u32* cand, u32* stage, u64& bytes) {
    const ListRef& S = ws.lists[d][ws.sm[d]];
    const u32 chunk = (u32)p.chunk;
    const u32 begin = ws.pos[d];
    const u32 dom = ws.dom[d];
    const u32 end = (dom - begin > chunk) ? begin + chunk : dom;
    u32* out = cand + (u64)d * chunk;
    u32* win = stage + (u64)d * p.stage_words + ws.used[d];
    u32 n = 0;
    for (u32 i0 = begin; i0 < end; i0 += 32 * UNR) {
        // UNR loads of the iterated list in flight before the tests.
        u32 e[UNR], c[UNR];
        bool ok[UNR];
#pragma unroll
        for (u32 j = 0; j < UNR; ++j) {
            const u32 i = i0 + j * 32 + lane;
            e[j] = (i < end) ? S.ids[i] : 0u;
        }
#pragma unroll
        for (u32 j = 0; j < UNR; ++j) {
            const u32 i = i0 + j * 32 + lane;
            c[j] = 0;
            ok[j] = (i < end) && element_of(S, i, e[j], c[j], bytes);
        }
        block_accept(p, ws, lv, d, lane, checkl, lv[2], c, ok, win, bytes);
#pragma unroll
        for (u32 j = 0; j < UNR; ++j) {
            const u32 m = __ballot_sync(FULL, ok[j]);
            if (ok[j]) out[n + __popc(m & ((1u << lane) - 1u))] = c[j];
            n += __popc(m);
        }
    }
    __syncwarp();
    if (lane == 0) {
        ws.pos[d] = end;
        ws.ncand[d] = n;
        ws.idx[d] = 0;
    }
    __syncwarp();
}

// Per-lane share of the number of accepted elements at the last level d
// (from the level's cursor, 0 except for a split first level), checking
// the level's conflicts unless `confs` is given (the memo's count): then
// the count leaves them out, and *confs gets the lane's share of the
// accepted elements that equal a conflict binding.
// (Warp-uniform block loop: block_accept works warp-wide.)
__device__ u64 count_level(const Params& p, const WarpState& ws, const u32* lv, u32 d, u32 lane,
                           u32 checkl, u32* stage, u64& bytes, u64* confs = 0) {
    const ListRef& S = ws.lists[d][ws.sm[d]];
    const u32 dom = ws.dom[d];
    u32* win = stage + (u64)d * p.stage_words + ws.used[d];
    u64 cnt = 0;
    for (u32 i0 = ws.pos[d]; i0 < dom; i0 += 32 * UNR) {
        u32 e[UNR], c[UNR];
        bool ok[UNR];
#pragma unroll
        for (u32 j = 0; j < UNR; ++j) {
            const u32 i = i0 + j * 32 + lane;
            e[j] = (i < dom) ? S.ids[i] : 0u;
        }
#pragma unroll
        for (u32 j = 0; j < UNR; ++j) {
            const u32 i = i0 + j * 32 + lane;
            c[j] = 0;
            ok[j] = (i < dom) && element_of(S, i, e[j], c[j], bytes);
        }
        block_accept(p, ws, lv, d, lane, checkl, confs ? 0u : lv[2], c, ok, win, bytes);
#pragma unroll
        for (u32 j = 0; j < UNR; ++j) {
            cnt += ok[j] ? 1u : 0u;
            if (confs && ok[j])
                for (u32 q = 0; q < lv[2]; ++q) *confs += ws.emb[lv[L_CONFS + q]] == c[j] ? 1u : 0u;
        }
    }
    return cnt;
}

// Match v17: the last-level memo. A slot is MEMO_WORDS words: a sequence
// word (odd while a writer fills the slot), the epoch, the tag (plan and
// depth), MEMO_KEY key bindings (NONE past the key) and the 64-bit count.
// Readers check the sequence word before and after reading the rest
// (a seqlock): a slot read while it was written is a miss, never a torn
// entry. Collisions evict.
__device__ __forceinline__ u32 memo_slot(const Params& p, u32 tag, const u32 (&key)[MEMO_KEY]) {
    u64 h = ((u64)tag << 32 | key[0]) * 0x9E3779B97F4A7C15ull;
    h ^= ((u64)key[1] << 32 | key[2]) * 0xC2B2AE3D27D4EB4Full;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    return (u32)(h >> 32) & (u32)p.memo_mask;
}

__device__ bool memo_get(const Params& p, u32 at, u32 tag, const u32 (&key)[MEMO_KEY], u64& n) {
    volatile const u32* s = (volatile const u32*)p.memo + (u64)at * MEMO_WORDS;
    const u32 q0 = s[0];
    if (q0 & 1u) return false;
    __threadfence();
    const bool same = s[1] == (u32)p.memo_epoch && s[2] == tag && s[3] == key[0] && s[4] == key[1] &&
                      s[5] == key[2];
    const u64 c = (u64)s[6] | ((u64)s[7] << 32);
    __threadfence();
    if (!same || s[0] != q0) return false;
    n = c;
    return true;
}

__device__ void memo_put(const Params& p, u32 at, u32 tag, const u32 (&key)[MEMO_KEY], u64 n) {
    u32* w = (u32*)p.memo + (u64)at * MEMO_WORDS;
    volatile u32* s = w;
    const u32 q0 = s[0];
    if ((q0 & 1u) || atomicCAS(w, q0, q0 + 1u) != q0) return;  // another writer has it
    __threadfence();
    s[1] = (u32)p.memo_epoch;
    s[2] = tag;
    s[3] = key[0];
    s[4] = key[1];
    s[5] = key[2];
    s[6] = (u32)n;
    s[7] = (u32)(n >> 32);
    __threadfence();
    atomicExch(w, q0 + 2u);
}

// Where the memo keeps the count of level d's lists for the current
// prefix: the tag (plan and depth), the key (the level's read bindings)
// and the slot.
struct MemoKey {
    u32 tag, at;
    u32 key[MEMO_KEY];
};

__device__ __forceinline__ MemoKey memo_key(const Params& p, const WarpState& ws, const u32* lv, u32 plan, u32 d) {
    MemoKey m;
    const u32 nkey = lv[L_MEMO];
#pragma unroll
    for (u32 k = 0; k < MEMO_KEY; ++k) m.key[k] = k < nkey ? ws.emb[lv[L_READS + k] & 0xffu] : NONE;
    m.tag = plan << 5 | d;
    m.at = memo_slot(p, m.tag, m.key);
    return m;
}

// Whether the memo holds m's count (warp-uniform; the count in n).
__device__ bool memo_lookup(const Params& p, const MemoKey& m, u32 lane, u64& n) {
    u32 hit = 0;
    if (lane == 0) hit = memo_get(p, m.at, m.tag, m.key, n) ? 1u : 0u;
    hit = __shfl_sync(FULL, hit, 0);
    n = __shfl_sync(FULL, n, 0);
    return hit != 0;
}

// How many of level d's conflict bindings pass its label and list tests
// (warp-uniform): each is one candidate of the memoised count that
// injectivity rules out (the bindings are distinct). One lane a binding;
// the smallest list first, where most fail.
__device__ u32 conflicts_in(const Params& p, const WarpState& ws, const u32* lv, u32 d, u32 lane, u32 checkl,
                            u64& bytes) {
    bool in = false;
    if (lane < lv[2]) {
        const u32 x = ws.emb[lv[L_CONFS + lane]];
        const u32 sm = ws.sm[d];
        in = (!checkl || __ldg((const u32*)p.vlabels + x) == lv[0]) && member(ws.lists[d][sm], x, bytes);
        for (u32 k = 0; k < lv[1] && in; ++k)
            if (k != sm) in = member(ws.lists[d][k], x, bytes);
    }
    return __popc(__ballot_sync(FULL, in));
}

// Defers the node at level d (its prefix is ws.emb[0..d), its lists are
// resolved) when its iterated list is long: writes one task per slice of
// p.defer_slice elements into p.defer and returns true. When the buffer
// cannot take all of them it returns false (the warp expands the node
// itself) and fills the slots it reserved with empty slices (lo = hi = 0).
// Match v11: the threshold is defer_wanted / share elements when the level
// block carries its label share (word 3, 16.16 fixed point; crates/gpu/src/
// shares.rs), so that a node is deferred by the candidates its list holds.
// Match v17: `drained_only` (a memoised last level) defers only by the
// drained threshold: a node counted by its warp is stored in the memo.
__device__ bool defer_node(const Params& p, const WarpState& ws, const u32* lv, u32 plan, u32 weight, u32 d,
                           u32 lane, bool drained_only) {
    const u32 dom = ws.dom[d];
    if (!p.defer || d >= TASK_PREFIX + 1) return false;
    const u32 share = lv[3];
    u64 min = p.defer_min;
    if (p.defer_wanted && share) {
        min = ((p.defer_wanted << 16) + share - 1) / share;
        if (min < 32) min = 32;
    }
    if (drained_only || (u64)dom < min) {
        // Match v14: once every task of the launch has been taken, a warp
        // that finishes has nothing left to do until the launch ends, so
        // nodes are deferred from defer_drained candidates (or the same
        // fraction of defer_min on a level with no share): the launch's
        // tail gets shorter and the next launch spreads that work over
        // every warp. A batch of few seeds is drained from its start.
        if (!p.defer_drained || !p.defer_wanted) return false;
        u64 dmin = share ? ((p.defer_drained << 16) + share - 1) / share : p.defer_min * p.defer_drained / p.defer_wanted;
        if (dmin < 32) dmin = 32;
        if ((u64)dom < dmin) return false;
        u32 drained = 0;
        if (lane == 0) drained = *(volatile const u64*)p.counter >= p.nseeds ? 1u : 0u;
        if (!__shfl_sync(FULL, drained, 0)) return false;
    }
    const u32 sl = (u32)p.defer_slice;
    const u32 n = (dom + sl - 1) / sl;
    u64 at = 0;
    if (lane == 0) at = atomicAdd((u64*)p.out + OUT_DEFERRED, (u64)n);
    at = __shfl_sync(FULL, at, 0);
    const bool fits = at + n <= p.defer_cap;
    u32* buf = (u32*)p.defer;
    for (u32 i = lane; i < n && at + i < p.defer_cap; i += 32) {
        u32* w = buf + (at + i) * TASK_WORDS;
        const u32 end = (i + 1) * sl;
        w[0] = plan;
        w[1] = weight;
        w[2] = fits ? i * sl : 0u;
        w[3] = fits ? (end < dom ? end : NONE) : 0u;
        w[4] = d;
        for (u32 k = 0; k < TASK_PREFIX; ++k) w[5 + k] = k < d ? ws.emb[k] : 0u;
    }
    __syncwarp();
    return fits;
}

extern "C" __global__ void __launch_bounds__(WARPS * 32) match_kernel(const Params p) {
    __shared__ WarpState sws[WARPS];
    const u32 lane = threadIdx.x & 31u;
    const u32 w = threadIdx.x >> 5;
    WarpState& ws = sws[w];
    const u64 gw = (u64)blockIdx.x * WARPS + w;
    u32* cand = (u32*)p.cand + gw * MAXQ * p.chunk;
    u32* stage = (u32*)p.stage + gw * MAXQ * p.stage_words;
    const u32* vlabels = (const u32*)p.vlabels;

    for (u32 i = lane; i < MAXQ * MAXR; i += 32) (&ws.stv[0][0])[i] = NONE;
    __syncwarp();
    u64 cpos = 0, cneg = 0, bytes = 0, cache_hits = 0, host_lists = 0, staged = 0, nodes = 0;
    u64 memo_hits = 0, memo_misses = 0;
    const u64 t_start = p.time_limit_ns ? global_ns() : 0;
    bool aborted = false;
    for (;;) {
        u64 s = 0;
        if (lane == 0) s = atomicAdd((u64*)p.counter, 1ull);
        s = __shfl_sync(FULL, s, 0);
        if (s >= p.nseeds) break;
        if (p.time_limit_ns) {
            u32 late = 0;
            if (lane == 0) late = global_ns() - t_start > p.time_limit_ns;
            if (__shfl_sync(FULL, late, 0)) aborted = true;
        }
        if (aborted) {
            // Out of time: leave the remaining tasks and flag the result.
            if (lane == 0) atomicOr((u64*)p.out + OUT_ABORTED, 1ull);
            break;
        }
        u32 plan, weight = 1, lo = 0, hi = NONE, start = 0;
        u32 v[TASK_PREFIX] = {0, 0, 0, 0, 0, 0, 0};
        if (p.implicit_seeds) {
            plan = 0;
            v[0] = (u32)s;
        } else {
            // A task (12 words): the subtree below the bound prefix
            // v0..v[start-1] of `plan`, restricted to the slice [lo, hi) of
            // level `start`'s iterated list. Heavy seeds are expanded and
            // sliced on the host for load balance; heavy nodes are deferred
            // by the kernel (prefixes of up to 7 vertices).
            const uint4 ta = __ldg((const uint4*)p.seeds + 3 * s);
            const uint4 tb = __ldg((const uint4*)p.seeds + 3 * s + 1);
            const uint4 tc = __ldg((const uint4*)p.seeds + 3 * s + 2);
            plan = ta.x;
            weight = ta.y;
            lo = ta.z;
            hi = ta.w;
            start = tb.x;
            v[0] = tb.y;
            v[1] = tb.z;
            v[2] = tb.w;
            v[3] = tc.x;
            v[4] = tc.y;
            v[5] = tc.z;
            v[6] = tc.w;
        }
        const u32* P = (const u32*)p.plans + (u64)plan * PLAN_WORDS;
        const u32 depth = P[0] & 0xffffu, sign = P[2], checkl = P[3];
        if (p.implicit_seeds) {
            start = P[1];
            if (__ldg(vlabels + v[0]) != P[PLAN_HEADER]) continue;
        }
        __syncwarp();
        if (lane == 0) {
#pragma unroll
            for (u32 k = 0; k < TASK_PREFIX; ++k) ws.emb[k] = v[k];
        }
        __syncwarp();
        u64 local = 0;
        if (start >= depth) {
            if (lane == 0) local = 1;
        } else {
            u32 d = start;
            const u32* lv = P + PLAN_HEADER + d * LEVEL_WORDS;
            enter_level(p, ws, lv, d, lane, start, stage, bytes, cache_hits, host_lists, staged);
            ++nodes;
            if (lane == 0) {
                const u32 dm = ws.dom[d];
                ws.dom[d] = hi < dm ? hi : dm;
                ws.pos[d] = lo < ws.dom[d] ? lo : ws.dom[d];
            }
            __syncwarp();
            if (d + 1 == depth) {
                local += count_level(p, ws, lv, d, lane, checkl, stage, bytes);
            } else {
                fill_chunk(p, ws, lv, d, lane, checkl, cand, stage, bytes);
                for (;;) {
                    if (ws.idx[d] < ws.ncand[d]) {
                        const u32 c = cand[(u64)d * p.chunk + ws.idx[d]];
                        __syncwarp();
                        if (lane == 0) {
                            ws.idx[d] += 1;
                            ws.emb[d] = c;
                        }
                        __syncwarp();
                        const u32 nd = d + 1;
                        const u32* nlv = P + PLAN_HEADER + nd * LEVEL_WORDS;
                        const bool last = nd + 1 == depth;
                        resolve_level(p, ws, nlv, nd, lane, cache_hits, host_lists);
                        ++nodes;
                        // (before the memo: a run of hits checks it too)
                        if (p.time_limit_ns && (nodes & 255u) == 0) {
                            u32 late = 0;
                            if (lane == 0) late = global_ns() - t_start > p.time_limit_ns;
                            if (__shfl_sync(FULL, late, 0)) {
                                // Flag now: this may be the warp's last task
                                // (the fetch loop then ends without a check).
                                aborted = true;
                                if (lane == 0) atomicOr((u64*)p.out + OUT_ABORTED, 1ull);
                                break;
                            }
                        }
                        // Match v17: a memoised last level whose count is
                        // in the memo needs neither staging nor a count.
                        const bool memo = last && p.memo && nlv[L_MEMO] && (!checkl || p.memo_labelled) &&
                                          ws.dom[nd] >= (u32)p.memo_min;
                        MemoKey mk;
                        if (memo) {
                            mk = memo_key(p, ws, nlv, plan, nd);
                            u64 n;
                            if (memo_lookup(p, mk, lane, n)) {
                                const u32 sub = conflicts_in(p, ws, nlv, nd, lane, checkl, bytes);
                                if (lane == 0) {
                                    local += n - sub;
                                    ++memo_hits;
                                }
                                continue;
                            }
                        }
                        stage_level(p, ws, nlv, nd, lane, start, stage, bytes, staged);
                        if (defer_node(p, ws, nlv, plan, weight, nd, lane, memo && !p.memo_defer)) continue;
                        if (memo) {
                            // Counted without the conflicts (stored), and
                            // the conflict bindings among them, in one pass.
                            u64 in = 0;
                            const u64 n = warp_sum64(count_level(p, ws, nlv, nd, lane, checkl, stage, bytes, &in));
                            const u64 sub = warp_sum64(in);
                            if (lane == 0) {
                                memo_put(p, mk.at, mk.tag, mk.key, n);
                                local += n - sub;
                                ++memo_misses;
                            }
                        } else if (last) {
                            local += count_level(p, ws, nlv, nd, lane, checkl, stage, bytes);
                        } else {
                            d = nd;
                            fill_chunk(p, ws, nlv, d, lane, checkl, cand, stage, bytes);
                        }
                    } else if (ws.pos[d] < ws.dom[d]) {
                        fill_chunk(p, ws, P + PLAN_HEADER + d * LEVEL_WORDS, d, lane, checkl,
                                   cand, stage, bytes);
                    } else {
                        if (d == start) break;
                        --d;
                    }
                }
            }
        }
        if (sign == 0) cpos += local * weight; else cneg += local * weight;
    }
    cpos = warp_sum64(cpos);
    cneg = warp_sum64(cneg);
    bytes = warp_sum64(bytes);
    host_lists = warp_sum64(host_lists);
    cache_hits = warp_sum64(cache_hits);
    staged = warp_sum64(staged);
    if (lane == 0) {
        u64* out = (u64*)p.out;
        if (cpos) atomicAdd(out + OUT_POS, cpos);
        if (cneg) atomicAdd(out + OUT_NEG, cneg);
        if (bytes) atomicAdd(out + OUT_HOST_BYTES, bytes);
        if (host_lists) atomicAdd(out + OUT_HOST_LISTS, host_lists);
        if (cache_hits) atomicAdd(out + OUT_CACHE_LISTS, cache_hits);
        if (staged) atomicAdd(out + OUT_STAGED_LISTS, staged);
        if (nodes) atomicAdd(out + OUT_NODES, nodes);
        if (memo_hits) atomicAdd(out + OUT_MEMO_HITS, memo_hits);
        if (memo_misses) atomicAdd(out + OUT_MEMO_MISSES, memo_misses);
    }
}

// table[idx[i]] = src[i]: per-batch updates of the device vertex table.
extern "C" __global__ void scatter_entries(VEntry* __restrict__ table, const u32* __restrict__ idx,
                                           const VEntry* __restrict__ src, u32 n) {
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        table[idx[i]] = src[i];
}

// Match v12 (crates/gpu/src/hot.rs): the batch's hot lists, copied once from
// host memory to device memory. Job j = (v, off): one warp copies v's raw
// list (and, when `labelled`, its edge labels right after it) from where its
// table entry points to area[off ..] with coalesced loads, then points the
// entry at the copy and sets HOT in its length, so that match_kernel reads
// it from device memory and does not count it as host bytes. The host
// restores the entries (scatter_entries) once the batch's kernels are done.
extern "C" __global__ void gather_lists(VEntry* __restrict__ table, const u32* __restrict__ jobs, u32 k,
                                        u32* __restrict__ area, u32 labelled) {
    const u32 lane = threadIdx.x & 31;
    const u32 warps = (gridDim.x * blockDim.x) >> 5;
    for (u32 j = (blockIdx.x * blockDim.x + threadIdx.x) >> 5; j < k; j += warps) {
        const u32 v = jobs[2 * j];
        u32* __restrict__ dst = area + jobs[2 * j + 1];
        const VEntry e = table[v];
        if (e.len & HOT) continue;
        const u32* __restrict__ src = (const u32*)e.ids;
        u32 i = lane;
        for (; i + 96 < e.len; i += 128) {
            const u32 a = src[i], b = src[i + 32], c = src[i + 64], d = src[i + 96];
            dst[i] = a;
            dst[i + 32] = b;
            dst[i + 64] = c;
            dst[i + 96] = d;
        }
        for (; i < e.len; i += 32) dst[i] = src[i];
        if (labelled) {
            const u32* __restrict__ ls = (const u32*)e.labs;
            for (u32 x = lane; x < e.len; x += 32) dst[e.len + x] = ls[x];
        }
        __syncwarp();
        if (lane == 0) {
            VEntry h;
            h.ids = (u64)dst;
            h.labs = labelled ? (u64)(dst + e.len) : 0ull;
            h.base = e.base;
            h.len = e.len | HOT;
            table[v] = h;
        }
    }
}

// dst[idx[i]] = vals[i]: per-batch updates of the device vertex labels.
extern "C" __global__ void scatter_u32(u32* __restrict__ dst, const u32* __restrict__ idx,
                                       const u32* __restrict__ vals, u32 n) {
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        dst[idx[i]] = vals[i];
}

// slots[rowidx[i]] = i + 1 (set) or 0 (clear): the DCSR cache's per-vertex
// slot map (crates/gpu/src/cache.rs), one load per lookup in match_kernel.
extern "C" __global__ void set_slots(u32* __restrict__ slots, const u32* __restrict__ rowidx, u32 k,
                                     u32 clear) {
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < k; i += gridDim.x * blockDim.x)
        slots[rowidx[i]] = clear ? 0u : i + 1;
}

// The resident cache's device-side commit (match v7; crates/gpu/src/resident.rs):
// one merge job turns the staged list at data[src, src + len) (old part of
// `base` entries with `ndel` marked ones at the sorted positions dels[d0 ..],
// then the sorted appended part) into the committed list (marked entries
// dropped, appended part merged in, as DynamicGraph::commit does) at
// scratch[dst ..]; edge labels (when `labelled`) move alike, from
// data[area + ..] to scratch[sarea + ..]. Jobs are 6 words: src, base, len,
// d0, ndel, dst. The output position of an unmarked old entry i is
// i - #marks before i + #appended < x; that of appended entry j is
// lower_bound(old, y) - #marks before it + j.
__device__ __forceinline__ u32 count_below(const u32* a, u32 n, u32 x) {
    u32 lo = 0, hi = n;
    while (lo < hi) {
        const u32 mid = (lo + hi) >> 1;
        if (a[mid] < x) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// Job j's merge by the calling block (all its threads).
__device__ __forceinline__ void merge_job(const u32* data, u32 area, u32 labelled, u32* scratch, u32 sarea,
                                          const u32* j, const u32* dels) {
    const u32 src = j[0], base = j[1], len = j[2], nd = j[4], dst = j[5];
    const u32* d = dels + j[3];
    const u32* l = data + src;
    const u32* app = l + base;
    const u32 napp = len - base;
    for (u32 i = threadIdx.x; i < base; i += blockDim.x) {
        const u32 x = l[i];
        if (x & MARK) continue;
        const u32 o = dst + i - count_below(d, nd, i) + count_below(app, napp, x);
        scratch[o] = x;
        if (labelled) scratch[(u64)sarea + o] = data[(u64)area + src + i];
    }
    for (u32 i = threadIdx.x; i < napp; i += blockDim.x) {
        const u32 y = app[i];
        u32 lo = 0, hi = base;
        while (lo < hi) {
            const u32 mid = (lo + hi) >> 1;
            if ((l[mid] & ~MARK) < y) lo = mid + 1; else hi = mid;
        }
        const u32 o = dst + lo - count_below(d, nd, lo) + i;
        scratch[o] = y;
        if (labelled) scratch[(u64)sarea + o] = data[(u64)area + src + base + i];
    }
}

// The merge and the copy back in one launch (match v7, run 5; queued right
// after the host's commit since match v9): job k's block merges the staged
// list into scratch[dst ..] (merge_job), then, after a barrier, copies the
// committed list, len - ndel entries, back to data[src ..] (and its labels
// to data[area + src ..]). The copy back only overwrites the job's own
// slot, whose reads the barrier has finished; other blocks' jobs own other
// slots.
extern "C" __global__ void merge_commit(u32* data, u32 area, u32 labelled, u32* __restrict__ scratch,
                                        u32 sarea, const u32* __restrict__ jobs,
                                        const u32* __restrict__ dels, u32 njobs) {
    for (u32 k = blockIdx.x; k < njobs; k += gridDim.x) {
        const u32* j = jobs + 6 * (u64)k;
        merge_job(data, area, labelled, scratch, sarea, j, dels);
        __syncthreads();
        const u32 src = j[0], dst = j[5];
        const u32 merged = j[2] - j[4];
        for (u32 i = threadIdx.x; i < merged; i += blockDim.x) {
            data[(u64)src + i] = scratch[(u64)dst + i];
            if (labelled) data[(u64)area + src + i] = scratch[(u64)sarea + dst + i];
        }
        __syncthreads();
    }
}

// The rest of a resident refresh in one launch (match v7, run 5): the
// patch's segments (whole lists and appended parts, one
// block per segment) and the three scatters (deletion marks into data, row
// words into rowptr, slot map words), grid-stride over all their entries.
// Each scatter's table is n indices then n values. The writes are
// disjoint: marks lie in a merged or kept old part, segments in a whole
// list's slot or after a list's old part.
extern "C" __global__ void apply_patch(u32* data, const u32* __restrict__ src, const u32* __restrict__ segs,
                                       u32 nsegs, const u32* __restrict__ marks, u32 nmarks,
                                       u32* __restrict__ rowptr, const u32* __restrict__ rows, u32 nrows,
                                       u32* __restrict__ slots, const u32* __restrict__ sl, u32 nslots) {
    for (u32 s = blockIdx.x; s < nsegs; s += gridDim.x) {
        const u32 from = segs[3 * s], to = segs[3 * s + 1], len = segs[3 * s + 2];
        for (u32 j = threadIdx.x; j < len; j += blockDim.x) data[(u64)to + j] = src[(u64)from + j];
    }
    const u32 total = nmarks + nrows + nslots;
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
        if (i < nmarks) {
            data[marks[i]] = marks[nmarks + i];
        } else if (i < nmarks + nrows) {
            const u32 r = i - nmarks;
            rowptr[rows[r]] = rows[nrows + r];
        } else {
            const u32 q = i - nmarks - nrows;
            slots[sl[q]] = sl[nslots + q];
        }
    }
}
