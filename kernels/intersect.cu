// Warp-cooperative sorted-set intersection counts (intersect v1).
//
// Building block of the GCSM matching kernel (GCSM Sec. V-C: set intersection
// of sorted neighbour lists, SIMD-parallel as in STMatch). One warp handles one
// pair (A, B) of sorted u32 lists stored as (offset, length) ranges of one
// array `lists`. Each lane takes every 32nd element of the shorter list and
// binary-searches it in the longer list; the per-lane hit counts are summed
// with a warp reduction. For duplicate-free lists (neighbour lists are) the
// result is |A intersect B|; in general it is the number of elements of the
// shorter list (with multiplicity) that occur in the longer one.
//
// Compiled at run time by NVRTC (crates/gpu/src/nvrtc.rs); no headers needed.

struct PairDesc {
    unsigned int a_off, a_len, b_off, b_len;
};

__device__ __forceinline__ unsigned int warp_sum(unsigned int v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    return __reduce_add_sync(0xffffffffu, v);
#else
    for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(0xffffffffu, v, d);
    return v;
#endif
}

// First index in [lo, hi) of `l` whose value is >= x (hi if none).
__device__ __forceinline__ unsigned int lower_bound(const unsigned int* __restrict__ l,
                                                    unsigned int lo, unsigned int hi,
                                                    unsigned int x) {
    while (lo < hi) {
        unsigned int mid = lo + ((hi - lo) >> 1);
        if (__ldg(l + mid) < x) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// pairs: num_pairs descriptors (16-byte aligned); out: one count per pair.
// Grid-stride over pairs in warp units, so any grid size is correct; the
// loop bound depends only on the warp index, so all 32 lanes stay converged
// for the reduction.
extern "C" __global__ void intersect_count_warp(const unsigned int* __restrict__ lists,
                                                const PairDesc* __restrict__ pairs,
                                                unsigned int num_pairs,
                                                unsigned int* __restrict__ out) {
    const unsigned int lane = threadIdx.x & 31u;
    const unsigned int warps_per_block = blockDim.x >> 5;
    const unsigned long long total_warps =
        (unsigned long long)gridDim.x * warps_per_block;
    for (unsigned long long p = (unsigned long long)blockIdx.x * warps_per_block +
                                (threadIdx.x >> 5);
         p < num_pairs; p += total_warps) {
        const uint4 d = __ldg(reinterpret_cast<const uint4*>(pairs) + p);
        // s = shorter list, l = longer list (A on ties).
        unsigned int s_off = d.x, s_len = d.y, l_off = d.z, l_len = d.w;
        if (s_len > l_len) {
            s_off = d.z; s_len = d.w; l_off = d.x; l_len = d.y;
        }
        const unsigned int* __restrict__ s = lists + s_off;
        const unsigned int* __restrict__ l = lists + l_off;
        unsigned int hits = 0;
        if (s_len > 0 && l_len > 0) {
            // Elements a lane sees are increasing, so its search window only
            // moves right: keep the last lower bound as the next start.
            unsigned int lo = 0;
            for (unsigned int i = lane; i < s_len; i += 32u) {
                const unsigned int x = __ldg(s + i);
                lo = lower_bound(l, lo, l_len, x);
                if (lo < l_len && __ldg(l + lo) == x) ++hits;
                if (lo >= l_len) break;
            }
        }
        const unsigned int total = warp_sum(hits);
        if (lane == 0) out[p] = total;
    }
}
