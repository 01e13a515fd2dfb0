// bench/gpu_rowsum.cu -- the row sums of (rows, cols) float32 matrices five
// ways, in one process, beside a device-to-device copy of the same bytes:
// jitc's kernels written out by hand -- pieces of 4096 elements, a block
// each (lane l folding its elements l, l + 256, ... into a double, then the
// block's fixed tree), and, where a row has several pieces, a second launch
// combining them ("pieces+comb", cuda/axis.c before a row of up to 65536
// elements among 1024 rows or more became one piece); a block a row, the
// same loop over each 4096 in turn ("whole", jitc_a256w, before its loads of
// 16 bytes); the whole loop with float4 loads (lane l takes 4 consecutive
// elements a step, as cuda/axis.c now does), adding in double as jitc does
// ("float4") and in float ("float4 f32acc");
// and CUB's DeviceSegmentedReduce::Sum, which CuPy's sum(a, axis=1) calls.
// GPU time per call: 20 calls queued behind a spin kernel, the median of 25
// batches, three rounds.
//
//   nvcc -O3 -arch=sm_90 -o /tmp/gpu_rowsum bench/gpu_rowsum.cu &&
//   /tmp/gpu_rowsum
#include <algorithm>
#include <cstdio>
#include <cub/cub.cuh>
#include <vector>
typedef long long i64;
template <typename A> __device__ A block_tree(A x) {
  const int l = threadIdx.x;
  for (int o = 16; o > 0; o >>= 1)
    x += __shfl_down_sync(~0u, x, o);
  __shared__ A sh[8];
  if ((l & 31) == 0)
    sh[l >> 5] = x;
  __syncthreads();
  if (l < 32) {
    x = sh[l & 7];
    for (int o = 4; o > 0; o >>= 1)
      x += __shfl_down_sync(~0u, x, o);
  }
  return x;
}
// pieces of 4096: piece q of row q/pps
__global__ void __launch_bounds__(256) pieces(const float *__restrict__ a, float *__restrict__ s,
                                              double *__restrict__ part, i64 C, i64 pps) {
  const i64 q = blockIdx.x, r = q / pps, lo = (q - r * pps) * 4096,
            hi = C - lo < 4096 ? C : lo + 4096;
  const int l = threadIdx.x;
  double x = 0;
#pragma unroll
  for (int k = 0; k < 16; k++) {
    i64 e = lo + l + (i64)k * 256;
    if (e < hi)
      x += (double)a[r * C + e];
  }
  x = block_tree(x);
  if (l == 0) {
    if (pps == 1)
      s[r] = (float)x;
    else
      part[q] = x;
  }
}
__global__ void combine(const double *__restrict__ part, float *__restrict__ s, i64 R, i64 pps) {
  i64 t = (i64)blockIdx.x * 256 + threadIdx.x;
  if (t >= R)
    return;
  double x = 0;
  for (i64 j = 0; j < pps; j++)
    x += part[t * pps + j];
  s[t] = (float)x;
}
// a block per row, chunks of 4096 each unrolled 16
__global__ void __launch_bounds__(256)
    whole(const float *__restrict__ a, float *__restrict__ s, i64 C) {
  const i64 r = blockIdx.x;
  const int l = threadIdx.x;
  double x = 0;
  for (i64 lo = 0; lo < C; lo += 4096) {
#pragma unroll
    for (int k = 0; k < 16; k++) {
      i64 e = lo + l + (i64)k * 256;
      if (e < C)
        x += (double)a[r * C + e];
    }
  }
  x = block_tree(x);
  if (l == 0)
    s[r] = (float)x;
}
template <typename A>
__global__ void __launch_bounds__(256)
    vec(const float *__restrict__ a, float *__restrict__ s, i64 C) {
  const i64 r = blockIdx.x;
  const int l = threadIdx.x;
  A x = 0;
  const float4 *p = (const float4 *)(a + r * C);
  for (i64 lo = 0; lo < C / 4; lo += 1024) {
#pragma unroll
    for (int k = 0; k < 4; k++) {
      float4 v = p[lo + l + k * 256];
      x += v.x;
      x += v.y;
      x += v.z;
      x += v.w;
    }
  }
  x = block_tree(x);
  if (l == 0)
    s[r] = (float)x;
}
__global__ void spin(long long t) {
  long long s = clock64();
  while (clock64() - s < t) {
  }
}
int main() {
  const i64 shapes[][2] = {{4096, 4096}, {8192, 8192}, {2000, 2000}, {4096, 8192}, {1024, 16384}};
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (auto &sh : shapes) {
    i64 R = sh[0], C = sh[1], pps = (C + 4095) / 4096;
    float *a, *s;
    double *part;
    cudaMalloc(&a, R * C * 4);
    cudaMalloc(&s, R * 4);
    cudaMalloc(&part, R * pps * 8);
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
    const char *names[] = {"pieces+comb", "whole", "float4", "cub", "d2d copy", "float4 f32acc"};
    float *b;
    cudaMalloc(&b, R * C * 4);
    for (int w = 0; w < 6; w++) {
      if ((w == 2 || w == 5) && C % 4096)
        continue;
      double best[3];
      for (int round = 0; round < 3; round++) {
        std::vector<float> t;
        for (int rep = 0; rep < 25; rep++) {
          spin<<<1, 1>>>(20000000);
          cudaEventRecord(e0);
          for (int k = 0; k < 20; k++) {
            if (w == 0) {
              pieces<<<R * pps, 256>>>(a, s, part, C, pps);
              if (pps > 1)
                combine<<<(R + 255) / 256, 256>>>(part, s, R, pps);
            } else if (w == 1)
              whole<<<R, 256>>>(a, s, C);
            else if (w == 2)
              vec<double><<<R, 256>>>(a, s, C);
            else if (w == 5)
              vec<float><<<R, 256>>>(a, s, C);
            else if (w == 3)
              cub::DeviceSegmentedReduce::Sum(tmp, tb, a, s, (int)R, off, off + 1);
            else
              cudaMemcpyAsync(b, a, R * C * 2, cudaMemcpyDeviceToDevice);
          }
          cudaEventRecord(e1);
          cudaEventSynchronize(e1);
          float ms;
          cudaEventElapsedTime(&ms, e0, e1);
          t.push_back(ms / 20);
        }
        std::sort(t.begin(), t.end());
        best[round] = t[12];
      }
      printf("(%lld, %lld) %-12s %.4f %.4f %.4f ms\n", R, C, names[w], best[0], best[1], best[2]);
    }
    cudaFree(a);
    cudaFree(s);
    cudaFree(part);
    cudaFree(off);
    cudaFree(tmp);
    cudaFree(b);
  }
  return cudaGetLastError() != cudaSuccess;
}
