// im2col for convolution as GEMM (cross-correlation, zero padding), as the CPU conv defines it.
// Elements are copied as raw bits, so one build per element size serves every dtype:
// -DGC_ELEM=uint (f32), ulong (f64) or ushort (f16). A padded position is all-zero bits, 0.0.

typedef GC_ELEM elem_t;

// NCHW: for images n0 .. n0+images-1, image j's column matrix is (C·R·S) × (P·Q), row-major,
// at col + j·C·R·S·P·Q: row (c·R + r)·S + s, column p·Q + q.
__kernel void gc_im2col_nchw(__global const elem_t* restrict x, __global elem_t* restrict col,
                             ulong n0, uint images, uint C, uint H, uint W, uint R, uint S,
                             uint P, uint Q, uint stride, uint pad) {
  const ulong pq = (ulong)P * Q;
  const ulong per_image = (ulong)C * R * S * pq;
  const ulong idx = get_global_id(0);
  if (idx >= per_image * images) return;
  const ulong j = idx / per_image;
  const ulong in_image = idx - j * per_image;
  const ulong row = in_image / pq;
  const ulong column = in_image - row * pq;
  const uint s = (uint)(row % S);
  const uint r = (uint)((row / S) % R);
  const uint c = (uint)(row / ((ulong)R * S));
  const uint p = (uint)(column / Q);
  const uint q = (uint)(column % Q);
  const long h = (long)p * stride - pad + r;
  const long w = (long)q * stride - pad + s;
  elem_t v = 0;
  if (h >= 0 && h < H && w >= 0 && w < W)
    v = x[(((n0 + j) * C + c) * H + (ulong)h) * W + (ulong)w];
  col[idx] = v;
}

// NHWC: for images n0 .. n0+images-1 the column matrix is (images·P·Q) × (R·S·C), row-major:
// row (j·P + p)·Q + q, column (r·S + s)·C + c, so that col · Wᵀ (W is K × R·S·C) is NHWC output.
__kernel void gc_im2col_nhwc(__global const elem_t* restrict x, __global elem_t* restrict col,
                             ulong n0, uint images, uint C, uint H, uint W, uint R, uint S,
                             uint P, uint Q, uint stride, uint pad) {
  const ulong rsc = (ulong)R * S * C;
  const ulong rows = (ulong)images * P * Q;
  const ulong idx = get_global_id(0);
  if (idx >= rows * rsc) return;
  const ulong row = idx / rsc;
  const ulong column = idx - row * rsc;
  const uint c = (uint)(column % C);
  const uint s = (uint)((column / C) % S);
  const uint r = (uint)(column / ((ulong)S * C));
  const uint q = (uint)(row % Q);
  const uint p = (uint)((row / Q) % P);
  const ulong j = row / ((ulong)P * Q);
  const long h = (long)p * stride - pad + r;
  const long w = (long)q * stride - pad + s;
  elem_t v = 0;
  if (h >= 0 && h < H && w >= 0 && w < W)
    v = x[(((n0 + j) * H + (ulong)h) * W + (ulong)w) * C + c];
  col[idx] = v;
}
