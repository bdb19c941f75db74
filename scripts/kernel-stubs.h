// scripts/kernel-stubs.h — just enough of CUDA's device vocabulary for a
// host C++ compiler to parse kernels/*.cu (scripts/check-kernels.sh). The
// kernels are compiled for real only by NVRTC on the device machine; this
// catches syntax and type errors here, before a device call is spent.
// Declarations only: nothing here is ever run.
#define __device__
#define __global__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(x)
struct dim3_ { unsigned x, y, z; };
static dim3_ threadIdx, blockIdx, blockDim, gridDim;
struct uint4 { unsigned x, y, z, w; };
unsigned __ballot_sync(unsigned, int);
template <class T> T __shfl_sync(unsigned, T, int);
template <class T> T __shfl_xor_sync(unsigned, T, int);
int __popc(unsigned);
int __popcll(unsigned long long);
int __clz(unsigned);
int __any_sync(unsigned, int);
int __all_sync(unsigned, int);
void __syncwarp(unsigned m = 0xffffffffu);
void __syncthreads();
template <class T> T __ldg(const T*);
unsigned long long atomicAdd(unsigned long long*, unsigned long long);
unsigned atomicAdd(unsigned*, unsigned);
unsigned long long atomicOr(unsigned long long*, unsigned long long);
unsigned atomicOr(unsigned*, unsigned);
unsigned long long atomicMax(unsigned long long*, unsigned long long);
unsigned atomicMax(unsigned*, unsigned);
unsigned atomicMin(unsigned*, unsigned);
unsigned long long atomicCAS(unsigned long long*, unsigned long long, unsigned long long);
unsigned atomicCAS(unsigned*, unsigned, unsigned);
unsigned atomicExch(unsigned*, unsigned);
template <class T> T min(T a, T b);
template <class T> T max(T a, T b);
void __threadfence();
void __nanosleep(unsigned);
