// Builds one OpenCL source file for the first device of the platform whose name contains a given
// text and writes the program binary (PTX on NVIDIA's OpenCL) to stdout, the build log to
// stderr: to read what the vendor compiler made of gpucheck's kernels (tools/device/*.sh).
//   cl-binary PLATFORM_TEXT FILE.cl "BUILD OPTIONS" > out.ptx
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(cl_int rc, const char* call) {
  if (rc != CL_SUCCESS) {
    fprintf(stderr, "cl-binary: %s failed: %d\n", call, rc);
    exit(1);
  }
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: cl-binary PLATFORM_TEXT FILE.cl \"OPTIONS\"\n");
    return 2;
  }
  FILE* f = fopen(argv[2], "rb");
  if (!f) {
    perror(argv[2]);
    return 2;
  }
  static char src[1 << 20];
  size_t len = fread(src, 1, sizeof src - 1, f);
  fclose(f);
  src[len] = 0;
  cl_platform_id plats[16];
  cl_uint np = 0;
  check(clGetPlatformIDs(16, plats, &np), "clGetPlatformIDs");
  for (cl_uint i = 0; i < np; ++i) {
    char name[256] = {0};
    check(clGetPlatformInfo(plats[i], CL_PLATFORM_NAME, sizeof name - 1, name, NULL),
          "clGetPlatformInfo");
    if (!strstr(name, argv[1])) continue;
    cl_device_id dev;
    check(clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 1, &dev, NULL), "clGetDeviceIDs");
    cl_int rc;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &rc);
    check(rc, "clCreateContext");
    const char* s = src;
    cl_program prog = clCreateProgramWithSource(ctx, 1, &s, &len, &rc);
    check(rc, "clCreateProgramWithSource");
    rc = clBuildProgram(prog, 1, &dev, argv[3], NULL, NULL);
    static char log[1 << 16];
    clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
    fprintf(stderr, "%s", log);
    check(rc, "clBuildProgram");
    size_t size = 0;
    check(clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL),
          "CL_PROGRAM_BINARY_SIZES");
    unsigned char* bin = malloc(size);
    check(clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL),
          "CL_PROGRAM_BINARIES");
    fwrite(bin, 1, size, stdout);
    return 0;
  }
  fprintf(stderr, "cl-binary: no platform named like %s\n", argv[1]);
  return 1;
}
