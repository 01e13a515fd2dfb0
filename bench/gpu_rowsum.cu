// bench/gpu_rowsum.cu -- the row sums of a (4096, 4096) float32 matrix three
// ways, in one process: jitc's unit loop written out by hand (a block a row,
// lane l folding its 16 elements l, l + 256, ... into a double, then the
// block's fixed tree), the same with float4 loads (lane l takes 4 consecutive
// elements a step: other bits), and CUB's DeviceSegmentedReduce::Sum, which
// CuPy's sum(a, axis=1) calls.  GPU time per call: 20 calls queued behind a
// spin kernel, the median of 25 batches, three rounds.
//
//   nvcc -O3 -arch=sm_90 -o /tmp/gpu_rowsum bench/gpu_rowsum.cu &&
//   /tmp/gpu_rowsum
#include <algorithm>
#include <cstdio>
#include <cub/cub.cuh>
#include <vector>
typedef long long i64;

// The block's 256 lanes combined in jitc's fixed tree; lane 0 stores.
__device__ void block_tree(double x, float *out) {
  const int l = threadIdx.x;
  for (int o = 16; o > 0; o >>= 1)
    x += __shfl_down_sync(~0u, x, o);
  __shared__ double sh[8];
  if ((l & 31) == 0)
    sh[l >> 5] = x;
  __syncthreads();
  if (l < 32) {
    x = sh[l & 7];
    for (int o = 4; o > 0; o >>= 1)
      x += __shfl_down_sync(~0u, x, o);
    if (l == 0)
      *out = (float)x;
  }
}

__global__ void __launch_bounds__(256)
    scal(const float *__restrict__ a, float *__restrict__ s, i64 C) {
  const i64 r = blockIdx.x;
  const int l = threadIdx.x;
  double x = 0;
#pragma unroll
  for (int k = 0; k < 16; k++) {
    i64 e = l + (i64)k * 256;
    if (e < C)
      x += (double)a[r * C + e];
  }
  block_tree(x, s + r);
}
__global__ void __launch_bounds__(256)
    vec(const float *__restrict__ a, float *__restrict__ s, i64 C) {
  const i64 r = blockIdx.x;
  const int l = threadIdx.x;
  double x = 0;
  const float4 *p = (const float4 *)(a + r * C);
#pragma unroll
  for (int k = 0; k < 4; k++) {
    float4 v = p[l + k * 256];
    x += v.x;
    x += v.y;
    x += v.z;
    x += v.w;
  }
  block_tree(x, s + r);
}
__global__ void spin(long long t) {
  long long s = clock64();
  while (clock64() - s < t) {
  }
}
int main() {
  const i64 R = 4096, C = 4096;
  float *a, *s;
  cudaMalloc(&a, R * C * 4);
  cudaMalloc(&s, R * 4);
  std::vector<float> h(R * C);
  for (i64 i = 0; i < R * C; i++)
    h[i] = (float)((i * 2654435761u) % 1000) / 1000.f;
  cudaMemcpy(a, h.data(), R * C * 4, cudaMemcpyHostToDevice);
  int *off;
  cudaMalloc(&off, (R + 1) * 4);
  std::vector<int> ho(R + 1);
  for (int i = 0; i <= R; i++)
    ho[i] = i * C;
  cudaMemcpy(off, ho.data(), (R + 1) * 4, cudaMemcpyHostToDevice);
  void *tmp = 0;
  size_t tb = 0;
  cub::DeviceSegmentedReduce::Sum(tmp, tb, a, s, (int)R, off, off + 1);
  cudaMalloc(&tmp, tb);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  const char *names[3] = {"scalar16", "float4", "cub"};
  for (int round = 0; round < 3; round++)
    for (int w = 0; w < 3; w++) {
      std::vector<float> t;
      for (int rep = 0; rep < 25; rep++) {
        spin<<<1, 1>>>(20000000);
        cudaEventRecord(e0);
        for (int b = 0; b < 20; b++) {
          if (w == 0)
            scal<<<R, 256>>>(a, s, C);
          else if (w == 1)
            vec<<<R, 256>>>(a, s, C);
          else
            cub::DeviceSegmentedReduce::Sum(tmp, tb, a, s, (int)R, off,
                                            off + 1);
        }
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        float ms;
        cudaEventElapsedTime(&ms, e0, e1);
        t.push_back(ms / 20);
      }
      std::sort(t.begin(), t.end());
      printf("round %d %-9s %.4f ms\n", round, names[w], t[12]);
    }
  return 0;
}
