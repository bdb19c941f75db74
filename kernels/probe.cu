// Memory-read probes (probe v1) and zero-copy round-trip helpers.
//
// GCSM (Sec. II-C) reads CPU-resident neighbour lists from the GPU by
// zero-copy access in 128-byte lines, and caches hot lists in device memory.
// These kernels measure what such reads cost: a sequential streaming read
// (16 B per thread per step, coalesced) and a random read in which each warp
// loads one whole 128-byte line (32 lanes x 4 B) at a pseudo-random line
// index, which is the access pattern of a neighbour-list lookup. The same
// kernels read device memory, pinned device-mapped host memory and managed
// memory; only the pointer differs.
//
// Compiled at run time by NVRTC (crates/gpu/src/nvrtc.rs); no headers needed.

// Results are folded into `acc` and written only if they hit a value no input
// produces in practice, so the loads cannot be optimised away.
#define PROBE_MAGIC 0x9e3779b9u

// 32-bit integer mixer (lowbias32); cheap enough that the random probe stays
// memory-bound on HBM.
__device__ __forceinline__ unsigned int mix32(unsigned int x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

// Sequential read of n_vec 16-byte vectors, grid-stride, 4 loads in flight
// per thread per iteration.
extern "C" __global__ void probe_seq(const uint4* __restrict__ data,
                                     unsigned long long n_vec,
                                     unsigned int* __restrict__ sink) {
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int acc = 0;
    for (; i + 3 * stride < n_vec; i += 4 * stride) {
        const uint4 a = data[i];
        const uint4 b = data[i + stride];
        const uint4 c = data[i + 2 * stride];
        const uint4 d = data[i + 3 * stride];
        acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w;
        acc ^= c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
    }
    for (; i < n_vec; i += stride) {
        const uint4 a = data[i];
        acc ^= a.x ^ a.y ^ a.z ^ a.w;
    }
    if (acc == PROBE_MAGIC) sink[0] = acc;
}

// Random read: n_reads warp-wide reads of one 128-byte line (32 words) each,
// at line mix32(r ^ seed) & line_mask (the number of lines is a power of two,
// at most 2^32). Bytes moved = n_reads * 128.
extern "C" __global__ void probe_rand(const unsigned int* __restrict__ data,
                                      unsigned int line_mask,
                                      unsigned long long n_reads,
                                      unsigned int seed,
                                      unsigned int* __restrict__ sink) {
    const unsigned int lane = threadIdx.x & 31u;
    const unsigned long long warp =
        ((unsigned long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const unsigned long long total_warps =
        ((unsigned long long)gridDim.x * blockDim.x) >> 5;
    unsigned int acc = 0;
    unsigned long long r = warp;
    for (; r + 3 * total_warps < n_reads; r += 4 * total_warps) {
        const unsigned long long l0 = mix32((unsigned int)r ^ seed) & line_mask;
        const unsigned long long l1 = mix32((unsigned int)(r + total_warps) ^ seed) & line_mask;
        const unsigned long long l2 = mix32((unsigned int)(r + 2 * total_warps) ^ seed) & line_mask;
        const unsigned long long l3 = mix32((unsigned int)(r + 3 * total_warps) ^ seed) & line_mask;
        const unsigned int a = data[l0 * 32 + lane];
        const unsigned int b = data[l1 * 32 + lane];
        const unsigned int c = data[l2 * 32 + lane];
        const unsigned int d = data[l3 * 32 + lane];
        acc ^= a ^ b ^ c ^ d;
    }
    for (; r < n_reads; r += total_warps) {
        acc ^= data[(unsigned long long)(mix32((unsigned int)r ^ seed) & line_mask) * 32 + lane];
    }
    if (acc == PROBE_MAGIC) sink[0] = acc;
}

// dst[i] = i * 2654435761 + seed (device-side writes, e.g. into pinned host
// memory through its device pointer).
extern "C" __global__ void fill_pattern(unsigned int* __restrict__ dst,
                                        unsigned long long n, unsigned int seed) {
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < n; i += stride) {
        dst[i] = (unsigned int)i * 2654435761u + seed;
    }
}

// dst[i] = src[i] + add (device reads one buffer and writes another).
extern "C" __global__ void copy_add(const unsigned int* __restrict__ src,
                                    unsigned int* __restrict__ dst,
                                    unsigned long long n, unsigned int add) {
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < n; i += stride) {
        dst[i] = src[i] + add;
    }
}
