// perfbot_cuda.cu — libperfbot_cuda.so's C ABI (perfbot_cuda.h) over the
// context of ctx.cuh, whose MSMs (msm_g1.cu, msm_g2.cu) and transforms
// (ntt.cu) are their own translation units. Errors inside are C++
// exceptions of one type, caught at every exported function and turned
// into a code and a message; nothing else crosses the boundary.
#include "ctx.cuh"

namespace pb {

void Stager::setup(Timer &tm) {
  if (!w.empty()) return;
  auto t0 = std::chrono::steady_clock::now();
  unsigned hc = std::thread::hardware_concurrency();
  int n = (int)std::min(8u, std::max(2u, hc / 2));
  w.resize(n);
  for (auto &x : w) {
    CK(cudaStreamCreateWithFlags(&x.s, cudaStreamNonBlocking));
    for (int b = 0; b < 2; b++) {
      CK(cudaHostAlloc(&x.buf[b], kChunk, cudaHostAllocDefault));
      CK(cudaEventCreateWithFlags(&x.ev[b], cudaEventDisableTiming));
    }
  }
  tm.host_step("pin_staging", since_ms(t0));
}

void Stager::copy(void *dst, const void *src, size_t bytes, bool to_device, cudaStream_t stream, Timer &tm) {
  if (bytes < kMin || disabled) {
    CK(cudaMemcpyAsync(dst, src, bytes, to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, stream));
    CK(cudaStreamSynchronize(stream));
    return;
  }
  setup(tm);
  cudaEvent_t after;
  CK(cudaEventCreateWithFlags(&after, cudaEventDisableTiming));
  CK(cudaEventRecord(after, stream));
  const size_t chunks = (bytes + kChunk - 1) / kChunk;
  std::vector<std::string> errs(w.size());
  std::vector<std::thread> threads;
  for (size_t id = 0; id < w.size(); id++) {
    threads.emplace_back([&, id] {
      try {
        Worker &x = w[id];
        CK(cudaSetDevice(device));
        CK(cudaStreamWaitEvent(x.s, after, 0));
        char *d = static_cast<char *>(dst);
        const char *sp = static_cast<const char *>(src);
        int b = 0;
        size_t pend_off = 0, pend_len = 0; // device→host: a chunk waiting in buf[1 − b]
        for (size_t j = id; j < chunks; j += w.size(), b ^= 1) {
          size_t off = j * kChunk, len = std::min(kChunk, bytes - off);
          CK(cudaEventSynchronize(x.ev[b])); // buf[b] is free again
          if (to_device) {
            memcpy(x.buf[b], sp + off, len);
            CK(cudaMemcpyAsync(d + off, x.buf[b], len, cudaMemcpyHostToDevice, x.s));
            CK(cudaEventRecord(x.ev[b], x.s));
            continue;
          }
          CK(cudaMemcpyAsync(x.buf[b], sp + off, len, cudaMemcpyDeviceToHost, x.s));
          CK(cudaEventRecord(x.ev[b], x.s));
          if (pend_len) {
            CK(cudaEventSynchronize(x.ev[b ^ 1]));
            memcpy(d + pend_off, x.buf[b ^ 1], pend_len);
          }
          pend_off = off;
          pend_len = len;
        }
        if (pend_len) {
          CK(cudaEventSynchronize(x.ev[b ^ 1]));
          memcpy(d + pend_off, x.buf[b ^ 1], pend_len);
        }
        CK(cudaStreamSynchronize(x.s));
      } catch (const Error &e) {
        errs[id] = e.msg.empty() ? "copy failed" : e.msg;
      } catch (const std::exception &e) {
        errs[id] = e.what();
      }
    });
  }
  for (auto &t : threads) t.join();
  cudaEventDestroy(after);
  for (auto &e : errs)
    if (!e.empty()) fail(PERFBOT_CUDA_ERR_CUDA, "staged copy: %s", e.c_str());
}

} // namespace pb

using namespace pb;

// guard runs f and turns an exception into a code and a message.
template <class F> static int32_t guard(perfbot_cuda_error *err, F f) {
  auto set = [&](int code, const char *msg) {
    if (err) {
      err->code = code;
      snprintf(err->message, sizeof err->message, "%s", msg);
    }
    return (int32_t)code;
  };
  try {
    f();
    return set(PERFBOT_CUDA_OK, "");
  } catch (const Error &e) {
    return set(e.code, e.msg.c_str());
  } catch (const std::bad_alloc &) {
    return set(PERFBOT_CUDA_ERR_MEMORY, "host memory exhausted");
  } catch (const std::exception &e) {
    return set(PERFBOT_CUDA_ERR_INTERNAL, e.what());
  } catch (...) {
    return set(PERFBOT_CUDA_ERR_INTERNAL, "unknown exception");
  }
}

static void need(bool ok, const char *what) {
  if (!ok) fail(PERFBOT_CUDA_ERR_ARGUMENT, "%s", what);
}

// upload copies n affine points of group (1 or 2) to the device.
static perfbot_cuda_points *upload(perfbot_cuda_ctx *ctx, const void *points, uint64_t n, int group) {
  need(points || n == 0, "points is NULL");
  need(n < (1ull << 31), "more than 2^31 points");
  const size_t size = group == 1 ? sizeof(DAffine) : sizeof(DAffine2);
  CK(cudaSetDevice(ctx->device));
  auto *p = new perfbot_cuda_points;
  p->ctx = ctx;
  p->n = n;
  p->group = group;
  cudaError_t e = cudaMalloc(&p->d, std::max<uint64_t>(n, 1) * size);
  if (e != cudaSuccess) {
    delete p;
    CK(e);
  }
  try {
    Timer quiet(ctx->stream, nullptr);
    ctx->stage.copy(p->d, points, n * size, true, ctx->stream, quiet);
  } catch (...) {
    cudaFree(p->d);
    delete p;
    throw;
  }
  return p;
}

static void free_points(perfbot_cuda_points *pts) {
  if (!pts) return;
  cudaSetDevice(pts->ctx->device);
  cudaFree(pts->d);
  delete pts;
}

// check_msm checks an MSM's arguments against resident points of group.
static void check_msm(perfbot_cuda_ctx *ctx, const perfbot_cuda_points *pts, int group, uint64_t offset,
                      const void *scalars, uint64_t n, void *out) {
  need(ctx && pts && out, "ctx, points or out is NULL");
  need(pts->ctx == ctx, "points were uploaded with another context");
  if (pts->group != group)
    fail(PERFBOT_CUDA_ERR_ARGUMENT, "G%d points given to the G%d MSM", pts->group, group);
  need(scalars || n == 0, "scalars is NULL");
  need(offset <= pts->n && n <= pts->n - offset, "offset + n is past the uploaded points");
}

extern "C" {

int32_t perfbot_cuda_abi_version(void) { return PERFBOT_CUDA_ABI_VERSION; }

int32_t perfbot_cuda_device_count(int32_t *count, perfbot_cuda_error *err) {
  return guard(err, [&] {
    need(count, "count is NULL");
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) {
      cudaGetLastError();
      n = 0;
    } else {
      CK(e);
    }
    *count = n;
  });
}

int32_t perfbot_cuda_device_info(int32_t device, perfbot_cuda_device *info, perfbot_cuda_error *err) {
  return guard(err, [&] {
    need(info, "info is NULL");
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, device));
    memset(info, 0, sizeof *info);
    snprintf(info->name, sizeof info->name, "%s", p.name);
    const unsigned char *u = reinterpret_cast<const unsigned char *>(p.uuid.bytes);
    snprintf(info->uuid, sizeof info->uuid, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    info->major = p.major;
    info->minor = p.minor;
    info->multiprocessors = p.multiProcessorCount;
    info->total_memory = p.totalGlobalMem;
    CK(cudaDriverGetVersion(&info->driver_version));
    CK(cudaRuntimeGetVersion(&info->runtime_version));
  });
}

int32_t perfbot_cuda_open(int32_t device, perfbot_cuda_ctx **out, perfbot_cuda_error *err) {
  return guard(err, [&] {
    need(out, "ctx is NULL");
    *out = nullptr;
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) fail(PERFBOT_CUDA_ERR_NO_DEVICE, "no CUDA device: %s", e == cudaSuccess ? "none found" : cudaGetErrorString(e));
    if (device < 0 || device >= n) fail(PERFBOT_CUDA_ERR_ARGUMENT, "device %d: there are %d", device, n);
    CK(cudaSetDevice(device));
    auto *ctx = new perfbot_cuda_ctx;
    ctx->device = device;
    ctx->stage.device = device;
    // PERFBOT_CUDA_STAGING=0 copies straight from pageable memory (to
    // measure what staging saves).
    const char *st = getenv("PERFBOT_CUDA_STAGING");
    ctx->stage.disabled = st && strcmp(st, "0") == 0;
    if (const char *r = getenv("PERFBOT_NTT_RADIX"); r && *r) {
      if (strcmp(r, "2") && strcmp(r, "4") && strcmp(r, "8")) {
        delete ctx;
        fail(PERFBOT_CUDA_ERR_ARGUMENT, "PERFBOT_NTT_RADIX=%s: want 2, 4 or 8 (or unset for the default)", r);
      }
      ctx->ntt_round = r[0] == '2' ? 1 : r[0] == '4' ? 2 : 3;
    }
    if (const char *t = getenv("PERFBOT_NTT_TWIST"); t && *t) {
      if (strcmp(t, "table") && strcmp(t, "pow")) {
        delete ctx;
        fail(PERFBOT_CUDA_ERR_ARGUMENT, "PERFBOT_NTT_TWIST=%s: want table or pow (or unset for the default)", t);
      }
      ctx->ntt_twist_table = strcmp(t, "table") == 0;
    }
#ifdef PERFBOT_TEST_HOOKS
    if (const char *sp = getenv("PERFBOT_TEST_SPIN_MSM"); sp && *sp) {
      unsigned long long pts = 0, ns = 0;
      char tail = 0;
      if (sscanf(sp, "%llu:%llu%c", &pts, &ns, &tail) != 2) {
        delete ctx;
        fail(PERFBOT_CUDA_ERR_ARGUMENT, "PERFBOT_TEST_SPIN_MSM=%s: want POINTS:NS, e.g. 2097151:500000", sp);
      }
      ctx->spin_points = pts;
      ctx->spin_ns = ns;
    }
#endif
    cudaError_t se = cudaStreamCreateWithFlags(&ctx->stream, cudaStreamNonBlocking);
    if (se != cudaSuccess) {
      delete ctx;
      CK(se);
    }
    *out = ctx;
  });
}

void perfbot_cuda_close(perfbot_cuda_ctx *ctx) {
  if (!ctx) return;
  cudaSetDevice(ctx->device);
  delete ctx;
}

int32_t perfbot_cuda_g1_upload(perfbot_cuda_ctx *ctx, const void *points, uint64_t n, perfbot_cuda_points **out,
                               perfbot_cuda_error *err) {
  return guard(err, [&] {
    need(ctx && out, "ctx or out is NULL");
    *out = nullptr;
    *out = upload(ctx, points, n, 1);
  });
}

void perfbot_cuda_g1_free(perfbot_cuda_points *pts) { free_points(pts); }

int32_t perfbot_cuda_g2_upload(perfbot_cuda_ctx *ctx, const void *points, uint64_t n, perfbot_cuda_points **out,
                               perfbot_cuda_error *err) {
  return guard(err, [&] {
    need(ctx && out, "ctx or out is NULL");
    *out = nullptr;
    *out = upload(ctx, points, n, 2);
  });
}

void perfbot_cuda_g2_free(perfbot_cuda_points *pts) { free_points(pts); }

int32_t perfbot_cuda_msm_g1(perfbot_cuda_ctx *ctx, const perfbot_cuda_points *pts, uint64_t offset,
                            const void *scalars, uint64_t n, int32_t window_bits, void *out,
                            perfbot_cuda_timings *timings, perfbot_cuda_error *err) {
  return guard(err, [&] {
    check_msm(ctx, pts, 1, offset, scalars, n, out);
    CK(cudaSetDevice(ctx->device));
    if (timings) timings->n = 0;
    Timer tm(ctx->stream, timings);
    ctx->msm_g1(static_cast<const DAffine *>(pts->d) + offset, scalars, n, window_bits, out, tm);
    tm.finish();
  });
}

int32_t perfbot_cuda_msm_g2(perfbot_cuda_ctx *ctx, const perfbot_cuda_points *pts, uint64_t offset,
                            const void *scalars, uint64_t n, int32_t window_bits, void *out,
                            perfbot_cuda_timings *timings, perfbot_cuda_error *err) {
  return guard(err, [&] {
    check_msm(ctx, pts, 2, offset, scalars, n, out);
    CK(cudaSetDevice(ctx->device));
    if (timings) timings->n = 0;
    Timer tm(ctx->stream, timings);
    ctx->msm_g2(static_cast<const DAffine2 *>(pts->d) + offset, scalars, n, window_bits, out, tm);
    tm.finish();
  });
}

int32_t perfbot_cuda_ntt(perfbot_cuda_ctx *ctx, void *data, int32_t log_n, int32_t direction, const void *omega,
                         const void *coset, int32_t flags, perfbot_cuda_timings *timings, perfbot_cuda_error *err) {
  return guard(err, [&] {
    need(ctx && data && omega, "ctx, data or omega is NULL");
    need(log_n >= 1 && log_n <= 30, "log_n must be 1..30");
    need(direction == PERFBOT_NTT_FORWARD || direction == PERFBOT_NTT_INVERSE, "direction must be forward or inverse");
    CK(cudaSetDevice(ctx->device));
    if (timings) timings->n = 0;
    Timer tm(ctx->stream, timings);
    HFr w, g;
    memcpy(&w, omega, sizeof w);
    if (coset) memcpy(&g, coset, sizeof g);
    NttPlan *p = ctx->plan(log_n, w, coset ? &g : nullptr);
    tm.mark("plan");
    uint64_t bytes = sizeof(DFr) << log_n;
    DFr *d = static_cast<DFr *>(data);
    bool on_device = flags & PERFBOT_NTT_DEVICE_DATA;
    if (!on_device) {
      d = ctx->ntt_data.get<DFr>(1ull << log_n);
      ctx->stage.copy(d, data, bytes, true, ctx->stream, tm);
      tm.mark("upload");
    }
    ctx->ntt(d, log_n, direction, *p, coset != nullptr, tm);
    if (!on_device) {
      ctx->stage.copy(data, d, bytes, false, ctx->stream, tm);
      tm.mark("download");
    }
    CK(cudaStreamSynchronize(ctx->stream));
    tm.finish();
  });
}

int32_t perfbot_cuda_quotient(perfbot_cuda_ctx *ctx, void *a, const void *b, const void *c, int32_t log_n,
                              const void *omega, const void *coset, perfbot_cuda_timings *timings,
                              perfbot_cuda_error *err) {
  return guard(err, [&] {
    need(ctx && a && b && c && omega && coset, "ctx, a, b, c, omega or coset is NULL");
    need(log_n >= 1 && log_n <= 30, "log_n must be 1..30");
    CK(cudaSetDevice(ctx->device));
    if (timings) timings->n = 0;
    Timer tm(ctx->stream, timings);
    HFr w, g;
    memcpy(&w, omega, sizeof w);
    memcpy(&g, coset, sizeof g);
    NttPlan *p = ctx->plan(log_n, w, &g);
    const uint64_t n = 1ull << log_n, bytes = n * sizeof(DFr);
    DFr *da = ctx->ntt_data.get<DFr>(n), *db = ctx->qb.get<DFr>(n), *dc = ctx->qc.get<DFr>(n);
    ctx->stage.copy(da, a, bytes, true, ctx->stream, tm);
    ctx->stage.copy(db, b, bytes, true, ctx->stream, tm);
    ctx->stage.copy(dc, c, bytes, true, ctx->stream, tm);
    tm.mark("upload");
    ctx->quotient(da, db, dc, log_n, *p, g, tm);
    ctx->stage.copy(a, da, bytes, false, ctx->stream, tm);
    tm.mark("download");
    CK(cudaStreamSynchronize(ctx->stream));
    tm.finish();
  });
}

int32_t perfbot_cuda_alloc(perfbot_cuda_ctx *ctx, uint64_t bytes, void **dptr, perfbot_cuda_error *err) {
  return guard(err, [&] {
    need(ctx && dptr, "ctx or dptr is NULL");
    CK(cudaSetDevice(ctx->device));
    CK(cudaMalloc(dptr, std::max<uint64_t>(bytes, 1)));
  });
}

int32_t perfbot_cuda_free(perfbot_cuda_ctx *ctx, void *dptr, perfbot_cuda_error *err) {
  return guard(err, [&] {
    need(ctx, "ctx is NULL");
    CK(cudaSetDevice(ctx->device));
    CK(cudaFree(dptr));
  });
}

int32_t perfbot_cuda_copy(perfbot_cuda_ctx *ctx, void *dst, const void *src, uint64_t bytes, int32_t to_device,
                          perfbot_cuda_error *err) {
  return guard(err, [&] {
    need(ctx && dst && src, "ctx, dst or src is NULL");
    CK(cudaSetDevice(ctx->device));
    Timer quiet(ctx->stream, nullptr);
    ctx->stage.copy(dst, src, bytes, to_device != 0, ctx->stream, quiet);
  });
}

} // extern "C"
