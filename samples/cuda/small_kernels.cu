// small_kernels.cu - a plain CUDA C workload with known counts, for checking
// agprof's GPU recording end to end (bench/gpu/device-check.sh).
//
//   small_kernels [KERNELS [COPIES]]
//
// Launches KERNELS tiny kernels (alternating add_one and scale<float>, one
// block of 32 threads each: far shorter than their launch cost, the
// dispatch-bound pattern), makes COPIES host-to-device and COPIES
// device-to-host synchronous copies spread among the launches, one memset
// and one device synchronisation, checks the result, and prints the counts
// on one line that the check script compares with the recording:
//   small_kernels: kernels=N htod=M dtoh=M memsets=1 result=ok
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                              \
	do {                                                                     \
		cudaError_t e_ = (call);                                         \
		if (e_ != cudaSuccess) {                                         \
			fprintf(stderr, "small_kernels: %s: %s\n", #call,        \
				cudaGetErrorString(e_));                          \
			return 1;                                                \
		}                                                                \
	} while (0)

__global__ void add_one(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] += 1.0f;
}

template <typename T>
__global__ void scale(T *x, T a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] * a;
}

int main(int argc, char **argv)
{
	const int n = 32;
	int kernels = argc > 1 ? atoi(argv[1]) : 10000;
	int copies = argc > 2 ? atoi(argv[2]) : 100;
	float host[n], *dev = nullptr;
	int adds = 0;

	if (kernels < 0 || copies < 0) {
		fprintf(stderr, "usage: small_kernels [KERNELS [COPIES]]\n");
		return 2;
	}
	CHECK(cudaMalloc(&dev, n * sizeof(float)));
	CHECK(cudaMemset(dev, 0, n * sizeof(float)));
	for (int i = 0; i < n; i++)
		host[i] = 0.0f;

	// Copies at evenly spaced launches, so they fall inside the launch loop.
	int every = copies ? (kernels > copies ? kernels / copies : 1) : 0;
	int htod = 0, dtoh = 0;
	for (int k = 0; k < kernels; k++) {
		if (every && k % every == 0 && htod < copies) {
			CHECK(cudaMemcpy(host, dev, n * sizeof(float), cudaMemcpyDeviceToHost));
			dtoh++;
			CHECK(cudaMemcpy(dev, host, n * sizeof(float), cudaMemcpyHostToDevice));
			htod++;
		}
		if (k % 2 == 0) {
			add_one<<<1, n>>>(dev, n);
			adds++;
		} else {
			scale<float><<<1, n>>>(dev, 1.0f, n);
		}
		CHECK(cudaGetLastError());
	}
	while (htod < copies) {     // fewer kernels than copies
		CHECK(cudaMemcpy(host, dev, n * sizeof(float), cudaMemcpyDeviceToHost));
		dtoh++;
		CHECK(cudaMemcpy(dev, host, n * sizeof(float), cudaMemcpyHostToDevice));
		htod++;
	}
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaMemcpy(host, dev, n * sizeof(float), cudaMemcpyDeviceToHost));
	dtoh++;
	CHECK(cudaFree(dev));

	int ok = 1;
	for (int i = 0; i < n; i++)
		ok &= host[i] == (float)adds;
	printf("small_kernels: kernels=%d htod=%d dtoh=%d memsets=1 result=%s\n",
	       kernels, htod, dtoh, ok ? "ok" : "wrong");
	return ok ? 0 : 1;
}
