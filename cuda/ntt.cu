// ntt.cu — the transforms and Groth16's quotient: NTT plans, the pass
// kernels of ntt.cuh and the pointwise quotient, one translation unit.
#include "ctx.cuh"
#include "ntt.cuh"

namespace pb {

const DFr *NttPlan::local_roots(int k, bool inverse, cudaStream_t stream) {
  DevBuf &b = local[inverse][k];
  if (!b.p) {
    const uint32_t count = (1u << k) - 1;
    DFr *d = b.get<DFr>(count);
    ntt_local_roots<<<(count + 127) / 128, 128, 0, stream>>>(inverse ? wi : w, log_n, k, d);
    CK_LAUNCH("ntt_local_roots");
  }
  return static_cast<const DFr *>(b.p);
}

const DFr *NttPlan::twist_table(cudaStream_t stream) {
  if (!twist.p && !twist_failed) {
    const uint64_t n = 1ull << log_n;
    void *p = nullptr;
    cudaError_t e = cudaMalloc(&p, n * sizeof(DFr));
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError(); // clear it: running out here is not an error
      twist_failed = true;
      return nullptr;
    }
    CK(e);
    twist.p = p;
    twist.bytes = n * sizeof(DFr);
    ntt_twist_table<<<(n + 255) / 256, 256, 0, stream>>>(w, n, static_cast<DFr *>(p));
    CK_LAUNCH("ntt_twist_table");
  }
  return static_cast<const DFr *>(twist.p);
}

static void build_pow_table(PowTable &t, DevBuf &lo, DevBuf &hi, const HFr &b, const HFr &factor, int log_n,
                            cudaStream_t stream) {
  t.lb = (log_n + 1) / 2;
  t.hb = log_n - t.lb + 1; // hi covers exponents up to 2^(log_n+1): coset scales index < n
  std::vector<HFr> hl(1u << t.lb), hh(1u << t.hb);
  HFr x = HFr::one();
  for (auto &e : hl) {
    e = x;
    x = x * b;
  }
  HFr step = x; // b^(2^lb)
  x = factor;
  for (auto &e : hh) {
    e = x;
    x = x * step;
  }
  t.lo = lo.get<DFr>(hl.size());
  t.hi = hi.get<DFr>(hh.size());
  CK(cudaMemcpyAsync(t.lo, hl.data(), hl.size() * sizeof(HFr), cudaMemcpyHostToDevice, stream));
  CK(cudaMemcpyAsync(t.hi, hh.data(), hh.size() * sizeof(HFr), cudaMemcpyHostToDevice, stream));
  CK(cudaStreamSynchronize(stream)); // the host vectors die here
}

// ntt_passes: the stages of each pass, split evenly into passes of at
// most 10 stages (2^10 elements, 32 KiB of shared memory a block).
static std::vector<int> ntt_passes(int log_n) {
  std::vector<int> ks;
  const int passes = (log_n + 9) / 10;
  for (int i = 0, rest = log_n; i < passes; i++) {
    ks.push_back(rest / (passes - i));
    rest -= ks.back();
  }
  return ks;
}

} // namespace pb

using namespace pb;

NttPlan *perfbot_cuda_ctx::plan(int log_n, const HFr &omega, const HFr *coset) {
  std::string key(reinterpret_cast<const char *>(&omega), sizeof omega);
  key += std::to_string(log_n);
  if (coset) key.append(reinterpret_cast<const char *>(coset), sizeof *coset);
  auto it = plans.find(key);
  if (it != plans.end()) return it->second;
  HFr n_std = HFr::zero();
  n_std.v[0] = 1ull << log_n;
  NttPlan *p = new NttPlan;
  try {
    p->log_n = log_n;
    p->n_inv = hfr_to_mont(n_std).inverse();
    // ω must be a primitive n-th root: ω^(n/2) = −1 (for n ≥ 2).
    HFr half = omega.pow_u64(1ull << (log_n - 1));
    if (half != HFr::one().neg())
      fail(PERFBOT_CUDA_ERR_ARGUMENT, "omega is not a primitive 2^%d-th root of unity", log_n);
    build_pow_table(p->w, p->wlo, p->whi, omega, HFr::one(), log_n, stream);
    build_pow_table(p->wi, p->ilo, p->ihi, omega.inverse(), HFr::one(), log_n, stream);
    if (coset) {
      if (coset->is_zero()) fail(PERFBOT_CUDA_ERR_ARGUMENT, "coset generator is zero");
      build_pow_table(p->g, p->glo, p->ghi, *coset, HFr::one(), log_n, stream);
      build_pow_table(p->gi, p->gilo, p->gihi, coset->inverse(), p->n_inv, log_n, stream);
    }
  } catch (...) {
    delete p;
    throw;
  }
  plans[key] = p;
  return p;
}

template <int R>
void perfbot_cuda_ctx::ntt_pass(int k, const DFr *in, DFr *out, int log_n, int s, const Twist &tw, const DFr *roots,
                                bool scale_in, NttPlan &p, bool last, int mode, const DFr &c) {
  const uint64_t groups = 1ull << (log_n - k);
  const size_t shared = ((size_t)1 << k) * sizeof(DFr);
  ntt_dif_rounds<R><<<groups, 1u << (k - R), shared, stream>>>(in, out, log_n, s, k, tw, roots, scale_in, p.g, last,
                                                               mode, c, p.gi);
  CK_LAUNCH("ntt_dif_rounds");
}

void perfbot_cuda_ctx::ntt(DFr *d, int log_n, int direction, NttPlan &p, bool coset, Timer &tm) {
  const bool inverse = direction != PERFBOT_NTT_FORWARD;
  const std::vector<int> ks = ntt_passes(log_n);
  const int passes = (int)ks.size();
  const int mode = inverse ? (coset ? 2 : 1) : 0;
  Twist tw;
  tw.w = inverse ? p.wi : p.w;
  tw.inverse = inverse;
  tw.mask = (1ull << log_n) - 1;
  if (passes > 1 && ntt_twist_table) tw.table = p.twist_table(stream);
  DFr c;
  memcpy(&c, &p.n_inv, sizeof c);
  DFr *scratch = passes > 1 ? ntt_scratch.get<DFr>(1ull << log_n) : d;
  int s = 0;
  for (int i = 0; i < passes; i++) {
    const int k = ks[i];
    const bool scale_in = coset && !inverse && s == 0;
    const bool last = i == passes - 1;
    const DFr *in = i == 0 ? d : scratch;
    DFr *out = last ? d : scratch;
    const DFr *roots = p.local_roots(k, inverse, stream);
    const int R = std::min(ntt_round, k); // a round has at most k stages
    if (R == 3)
      ntt_pass<3>(k, in, out, log_n, s, tw, roots, scale_in, p, last, mode, c);
    else if (R == 2)
      ntt_pass<2>(k, in, out, log_n, s, tw, roots, scale_in, p, last, mode, c);
    else
      ntt_pass<1>(k, in, out, log_n, s, tw, roots, scale_in, p, last, mode, c);
    s += k;
    if (tm.out) {
      char name[32];
      snprintf(name, sizeof name, "pass%d_k%d", i, k);
      tm.mark(name);
    }
  }
}

void perfbot_cuda_ctx::quotient(DFr *da, DFr *db, DFr *dc, int log_n, NttPlan &p, const HFr &g, Timer &tm) {
  const uint64_t n = 1ull << log_n;
  Timer quiet(stream, nullptr);
  for (DFr *x : {da, db, dc}) {
    ntt(x, log_n, PERFBOT_NTT_INVERSE, p, false, quiet);
    ntt(x, log_n, PERFBOT_NTT_FORWARD, p, true, quiet);
  }
  tm.mark("to_coset");
  // Z on the coset: (g·ω^i)^n − 1 = g^n − 1 for every i.
  HFr z = g.pow_u64(n) - HFr::one();
  if (z.is_zero()) fail(PERFBOT_CUDA_ERR_ARGUMENT, "coset generator g has g^n = 1: x^n − 1 vanishes on the coset");
  HFr zi = z.inverse();
  DFr dzi;
  memcpy(&dzi, &zi, sizeof dzi);
  quotient_pointwise<<<(n + 255) / 256, 256, 0, stream>>>(da, db, dc, n, dzi);
  CK_LAUNCH("quotient_pointwise");
  tm.mark("pointwise");
  ntt(da, log_n, PERFBOT_NTT_INVERSE, p, true, quiet);
  tm.mark("from_coset");
}
