//! A sequential CPU model of `kernels/match.cu` over the same inputs: the
//! encoded plans, the seeds, the raw lists (old part with marks, appended
//! part) and an optional DCSR pack. It reads the plan words and the pack
//! exactly as the kernel does, so tests without a GPU check the encoding,
//! the DCSR layout and the kernel's list semantics against the CPU engine.
//! It models the last-level memo (match v17) too: [`emulate`] memoises
//! every last level the plan words mark, whatever its length, so that the
//! tests check the memo's keys and its conflict subtraction on every
//! such node; [`emulate_with`] can turn it off.

use std::collections::HashMap;

use csm_graph::{GraphView, Version, VertexId};

use crate::cache::DcsrPack;
use crate::plan::{Shape, Task, L_READS, MEMO_KEY, NONE, PLAN_HEADER};

const MARK: u32 = csm_graph::view::MARK;
const VOLD: u32 = 0;
const VNEW: u32 = 2;

struct List {
    ids: Vec<u32>,
    labs: Vec<u32>,
    base: usize,
    len: usize,
    ver: u32,
    elabel: u32,
    dom: usize,
}

impl List {
    fn member(&self, x: u32) -> bool {
        let old = &self.ids[..self.base];
        let i = old.partition_point(|&e| e & !MARK < x);
        if i < self.base {
            let e = old[i];
            if e & !MARK == x && (e & MARK == 0 || self.ver == VOLD) {
                return self.elabel == NONE || self.labs[i] == self.elabel;
            }
        }
        if self.ver == VNEW && self.len > self.base {
            let app = &self.ids[self.base..self.len];
            let j = app.partition_point(|&e| e < x);
            if j < app.len() && app[j] == x {
                return self.elabel == NONE || self.labs[self.base + j] == self.elabel;
            }
        }
        false
    }

    fn element(&self, i: usize) -> Option<u32> {
        let e = self.ids[i];
        let (ok, c) = if i < self.base {
            (e & MARK == 0 || self.ver == VOLD, e & !MARK)
        } else {
            (true, e)
        };
        (ok && (self.elabel == NONE || self.labs[i] == self.elabel)).then_some(c)
    }
}

/// The last-level memo of one run: counts (conflicts left out) by plan,
/// depth and read bindings.
type Memo = HashMap<(u32, usize, [u32; MEMO_KEY]), u64>;

/// The kernel's counts `(positive, negative)` computed on the CPU, with the
/// last-level memo on for every node (see the module docs).
/// `seeds = None` means every vertex with plan 0 (static mode); otherwise
/// `seeds` are kernel tasks.
pub fn emulate<G: GraphView + ?Sized>(
    g: &G,
    cache: Option<&DcsrPack>,
    plans: &[u32],
    seeds: Option<&[Task]>,
    chunk: usize,
) -> (u64, u64) {
    emulate_with(g, cache, plans, seeds, chunk, true)
}

/// [`emulate`], with the last-level memo on or off.
pub fn emulate_with<G: GraphView + ?Sized>(
    g: &G,
    cache: Option<&DcsrPack>,
    plans: &[u32],
    seeds: Option<&[Task]>,
    chunk: usize,
    memo: bool,
) -> (u64, u64) {
    let mut table = memo.then(Memo::new);
    let implicit = seeds.is_none();
    let all: Vec<Task>;
    let seeds = match seeds {
        Some(s) => s,
        None => {
            all = (0..g.num_vertices() as VertexId)
                .map(|x| Task {
                    plan: 0,
                    weight: 1,
                    lo: 0,
                    hi: NONE,
                    start: plans[1],
                    prefix: [x, 0, 0, 0],
                })
                .collect();
            &all
        }
    };
    let Some(shape) = Shape::of_words(plans) else {
        return (0, 0);
    };
    let pw = shape.plan_words();
    let mut out = (0u64, 0u64);
    for s in seeds {
        let p = &plans[s.plan as usize * pw..(s.plan as usize + 1) * pw];
        let (depth, start, sign, checkl) = ((p[0] & 0xffff) as usize, s.start as usize, p[2], p[3] != 0);
        if implicit && g.labels()[s.prefix[0] as usize] != p[PLAN_HEADER] {
            continue;
        }
        let mut emb = [0u32; crate::plan::MAXQ];
        emb[..4].copy_from_slice(&s.prefix);
        let n = if start >= depth {
            1
        } else {
            let node = Node {
                plan: (shape, p, s.plan),
                depth,
                start,
                checkl,
                chunk,
            };
            level(
                g,
                cache,
                &node,
                start,
                &mut emb,
                (s.lo as usize, s.hi as usize),
                &mut table,
            )
        };
        let n = n * u64::from(s.weight);
        if sign == 0 {
            out.0 += n;
        } else {
            out.1 += n;
        }
    }
    out
}

fn resolve<G: GraphView + ?Sized>(g: &G, cache: Option<&DcsrPack>, v: VertexId, ver: u32, elabel: u32) -> List {
    let (ids, labs, base) = match cache.and_then(|c| c.lookup(v)) {
        Some((ids, labs, base)) => (ids.to_vec(), labs.to_vec(), base),
        None => {
            let nb = g.nbrs(v, Version::New);
            let mut ids = nb.base.to_vec();
            ids.extend_from_slice(nb.delta);
            let mut labs = nb.base_labels.to_vec();
            labs.extend_from_slice(nb.delta_labels);
            if labs.len() != ids.len() {
                labs = vec![0; ids.len()];
            }
            (ids, labs, nb.base.len())
        }
    };
    let len = ids.len();
    List {
        ids,
        labs,
        base,
        len,
        ver,
        elabel,
        dom: if ver == VNEW { len } else { base },
    }
}

/// What every level of one task's search shares: the plan (its build,
/// words and index), its depth, the task's start level, the label check
/// and the chunk size.
struct Node<'a> {
    plan: (Shape, &'a [u32], u32),
    depth: usize,
    start: usize,
    checkl: bool,
    chunk: usize,
}

fn level<G: GraphView + ?Sized>(
    g: &G,
    cache: Option<&DcsrPack>,
    node: &Node<'_>,
    d: usize,
    emb: &mut [u32; crate::plan::MAXQ],
    slice: (usize, usize),
    memo: &mut Option<Memo>,
) -> u64 {
    let (shape, p, plan) = node.plan;
    let (depth, checkl, chunk) = (node.depth, node.checkl, node.chunk);
    let lv = shape.level(p, d);
    let nr = lv[1] as usize;
    let lists: Vec<List> = (0..nr)
        .map(|k| {
            let rd = lv[L_READS + k];
            resolve(g, cache, emb[(rd & 0xff) as usize], rd >> 8, lv[shape.l_elabels() + k])
        })
        .collect();
    let mut sm = 0;
    for k in 0..nr {
        if lists[k].dom < lists[sm].dom {
            sm = k;
        }
    }
    let labels = g.labels();
    // The label and list tests (those the memo's count keeps).
    let passes = |c: u32, skip: Option<usize>| -> bool {
        (!checkl || labels[c as usize] == lv[0]) && (0..nr).all(|k| Some(k) == skip || lists[k].member(c))
    };
    // The conflict bindings (positions below d, fixed for this node).
    let conflicts: Vec<u32> = (0..lv[2] as usize)
        .map(|j| emb[lv[shape.l_confs() + j] as usize])
        .collect();
    let accept = |c: u32| -> bool { !conflicts.contains(&c) && passes(c, Some(sm)) };
    let s = &lists[sm];
    let dom = s.dom.min(slice.1);
    let first = slice.0.min(dom);
    let nkey = lv[shape.l_memo()] as usize;
    if d + 1 == depth && d > node.start && (1..=MEMO_KEY).contains(&nkey) {
        if let Some(table) = memo.as_mut() {
            // Match v17: the count without conflicts, by the read bindings;
            // then each conflict binding that passes is one candidate less.
            let mut key = [NONE; MEMO_KEY];
            for (k, slot) in key.iter_mut().enumerate().take(nkey) {
                *slot = emb[(lv[L_READS + k] & 0xff) as usize];
            }
            let n = *table.entry((plan, d, key)).or_insert_with(|| {
                (0..dom)
                    .filter(|&i| s.element(i).is_some_and(|c| passes(c, Some(sm))))
                    .count() as u64
            });
            return n - conflicts.iter().filter(|&&x| passes(x, None)).count() as u64;
        }
    }
    if d + 1 == depth {
        return (first..dom).filter(|&i| s.element(i).is_some_and(accept)).count() as u64;
    }
    let mut total = 0;
    let mut pos = first;
    while pos < dom {
        let end = (pos + chunk).min(dom);
        let cands: Vec<u32> = (pos..end).filter_map(|i| s.element(i).filter(|&c| accept(c))).collect();
        for c in cands {
            emb[d] = c;
            total += level(g, cache, node, d + 1, emb, (0, usize::MAX), memo);
        }
        pos = end;
    }
    total
}
