//go:build cgo

package gpu

/*
#cgo CFLAGS: -I${SRCDIR}/../../cuda
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include "perfbot_cuda.h"

typedef struct {
	void *abi_version, *device_count, *device_info, *open, *close;
	void *g1_upload, *g1_free, *msm_g1, *ntt, *quotient;
	void *g2_upload, *g2_free, *msm_g2;
} pb_fns;

// pb_load opens the library and resolves every entry point; it returns
// NULL or dlerror()'s message.
static const char *pb_load(const char *path, void **handle, pb_fns *f) {
	*handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!*handle) return dlerror();
#define PB_SYM(field, name) if (!(f->field = dlsym(*handle, name))) return dlerror();
	PB_SYM(abi_version, "perfbot_cuda_abi_version")
	PB_SYM(device_count, "perfbot_cuda_device_count")
	PB_SYM(device_info, "perfbot_cuda_device_info")
	PB_SYM(open, "perfbot_cuda_open")
	PB_SYM(close, "perfbot_cuda_close")
	PB_SYM(g1_upload, "perfbot_cuda_g1_upload")
	PB_SYM(g1_free, "perfbot_cuda_g1_free")
	PB_SYM(msm_g1, "perfbot_cuda_msm_g1")
	PB_SYM(ntt, "perfbot_cuda_ntt")
	PB_SYM(quotient, "perfbot_cuda_quotient")
	PB_SYM(g2_upload, "perfbot_cuda_g2_upload")
	PB_SYM(g2_free, "perfbot_cuda_g2_free")
	PB_SYM(msm_g2, "perfbot_cuda_msm_g2")
#undef PB_SYM
	return NULL;
}

static int32_t pb_abi_version(pb_fns *f) { return ((int32_t (*)(void))f->abi_version)(); }
static int32_t pb_device_count(pb_fns *f, int32_t *n, perfbot_cuda_error *e) {
	return ((int32_t (*)(int32_t *, perfbot_cuda_error *))f->device_count)(n, e);
}
static int32_t pb_device_info(pb_fns *f, int32_t d, perfbot_cuda_device *i, perfbot_cuda_error *e) {
	return ((int32_t (*)(int32_t, perfbot_cuda_device *, perfbot_cuda_error *))f->device_info)(d, i, e);
}
static int32_t pb_open(pb_fns *f, int32_t d, perfbot_cuda_ctx **c, perfbot_cuda_error *e) {
	return ((int32_t (*)(int32_t, perfbot_cuda_ctx **, perfbot_cuda_error *))f->open)(d, c, e);
}
static void pb_close(pb_fns *f, perfbot_cuda_ctx *c) { ((void (*)(perfbot_cuda_ctx *))f->close)(c); }
static int32_t pb_g1_upload(pb_fns *f, perfbot_cuda_ctx *c, const void *p, uint64_t n, perfbot_cuda_points **o,
                            perfbot_cuda_error *e) {
	return ((int32_t (*)(perfbot_cuda_ctx *, const void *, uint64_t, perfbot_cuda_points **, perfbot_cuda_error *))
	            f->g1_upload)(c, p, n, o, e);
}
static void pb_g1_free(pb_fns *f, perfbot_cuda_points *p) { ((void (*)(perfbot_cuda_points *))f->g1_free)(p); }
static int32_t pb_msm_g1(pb_fns *f, perfbot_cuda_ctx *c, perfbot_cuda_points *p, uint64_t off, const void *s, uint64_t n,
                         void *out, perfbot_cuda_timings *t, perfbot_cuda_error *e) {
	return ((int32_t (*)(perfbot_cuda_ctx *, const perfbot_cuda_points *, uint64_t, const void *, uint64_t, int32_t,
	                     void *, perfbot_cuda_timings *, perfbot_cuda_error *))f->msm_g1)(c, p, off, s, n, 0, out, t, e);
}
static int32_t pb_g2_upload(pb_fns *f, perfbot_cuda_ctx *c, const void *p, uint64_t n, perfbot_cuda_points **o,
                            perfbot_cuda_error *e) {
	return ((int32_t (*)(perfbot_cuda_ctx *, const void *, uint64_t, perfbot_cuda_points **, perfbot_cuda_error *))
	            f->g2_upload)(c, p, n, o, e);
}
static void pb_g2_free(pb_fns *f, perfbot_cuda_points *p) { ((void (*)(perfbot_cuda_points *))f->g2_free)(p); }
static int32_t pb_msm_g2(pb_fns *f, perfbot_cuda_ctx *c, perfbot_cuda_points *p, uint64_t off, const void *s, uint64_t n,
                         int32_t window_bits, void *out, perfbot_cuda_timings *t, perfbot_cuda_error *e) {
	return ((int32_t (*)(perfbot_cuda_ctx *, const perfbot_cuda_points *, uint64_t, const void *, uint64_t, int32_t,
	                     void *, perfbot_cuda_timings *, perfbot_cuda_error *))f->msm_g2)(c, p, off, s, n, window_bits, out, t, e);
}
static int32_t pb_ntt(pb_fns *f, perfbot_cuda_ctx *c, void *d, int32_t log_n, int32_t dir, const void *w,
                      const void *g, perfbot_cuda_timings *t, perfbot_cuda_error *e) {
	return ((int32_t (*)(perfbot_cuda_ctx *, void *, int32_t, int32_t, const void *, const void *, int32_t,
	                     perfbot_cuda_timings *, perfbot_cuda_error *))f->ntt)(c, d, log_n, dir, w, g, 0, t, e);
}
static int32_t pb_quotient(pb_fns *f, perfbot_cuda_ctx *c, void *a, const void *b, const void *cc, int32_t log_n,
                           const void *w, const void *g, perfbot_cuda_timings *t, perfbot_cuda_error *e) {
	return ((int32_t (*)(perfbot_cuda_ctx *, void *, const void *, const void *, int32_t, const void *, const void *,
	                     perfbot_cuda_timings *, perfbot_cuda_error *))f->quotient)(c, a, b, cc, log_n, w, g, t, e);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"math/bits"
	"os"
	"strings"
	"sync"
	"time"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/perfbot/perfbot/prover/groth16"
)

// Available reports whether this binary can load the library at all
// (it was built with cgo).
const Available = true

// The C structs match gnark-crypto's layouts byte for byte; these checks
// fail the build if either side changes.
var (
	_ [unsafe.Sizeof(bls12381.G1Affine{}) - 96]struct{}
	_ [96 - unsafe.Sizeof(bls12381.G1Affine{})]struct{}
	_ [unsafe.Sizeof(bls12381.G1Jac{}) - 144]struct{}
	_ [144 - unsafe.Sizeof(bls12381.G1Jac{})]struct{}
	_ [unsafe.Sizeof(bls12381.G2Affine{}) - 192]struct{}
	_ [192 - unsafe.Sizeof(bls12381.G2Affine{})]struct{}
	_ [unsafe.Sizeof(bls12381.G2Jac{}) - 288]struct{}
	_ [288 - unsafe.Sizeof(bls12381.G2Jac{})]struct{}
	_ [unsafe.Sizeof(fr.Element{}) - 32]struct{}
	_ [32 - unsafe.Sizeof(fr.Element{})]struct{}
	_ [C.PERFBOT_CUDA_ERR_MEMORY - codeMemory]struct{}
	_ [codeMemory - C.PERFBOT_CUDA_ERR_MEMORY]struct{}
)

// A Library is libperfbot_cuda.so, loaded once per process (dlopen keeps
// it mapped; it is never closed).
type Library struct {
	Path   string
	handle unsafe.Pointer
	fns    C.pb_fns
}

var (
	libMu  sync.Mutex
	loaded = map[string]*Library{}
)

func load(path string) (*Library, error) {
	libMu.Lock()
	defer libMu.Unlock()
	if l, ok := loaded[path]; ok {
		return l, nil
	}
	l := &Library{Path: path}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	if msg := C.pb_load(cpath, &l.handle, &l.fns); msg != nil {
		return nil, fmt.Errorf("load %s: %s", path, C.GoString(msg))
	}
	if v := int(C.pb_abi_version(&l.fns)); v != ABIVersion {
		return nil, fmt.Errorf("load %s: ABI version %d, this binary needs %d: rebuild the library (make cuda) from this revision", path, v, ABIVersion)
	}
	loaded[path] = l
	return l, nil
}

func cerr(what string, rc C.int32_t, e *C.perfbot_cuda_error) error {
	if rc == 0 {
		return nil
	}
	err := &Error{Code: int(rc), Op: what, Message: C.GoString(&e.message[0])}
	return err
}

// Devices lists the CUDA devices the library sees; none (not an error)
// on a machine without a GPU or driver.
func (l *Library) Devices() ([]Device, error) {
	var n C.int32_t
	var e C.perfbot_cuda_error
	if err := cerr("device count", C.pb_device_count(&l.fns, &n, &e), &e); err != nil {
		return nil, err
	}
	out := make([]Device, 0, int(n))
	for i := range int(n) {
		var info C.perfbot_cuda_device
		if err := cerr("device info", C.pb_device_info(&l.fns, C.int32_t(i), &info, &e), &e); err != nil {
			return nil, err
		}
		out = append(out, Device{
			Index:           i,
			Name:            C.GoString(&info.name[0]),
			UUID:            C.GoString(&info.uuid[0]),
			Major:           int(info.major),
			Minor:           int(info.minor),
			Multiprocessors: int(info.multiprocessors),
			DriverVersion:   int(info.driver_version),
			RuntimeVersion:  int(info.runtime_version),
			Memory:          uint64(info.total_memory),
		})
	}
	return out, nil
}

// An Engine runs a proof's G1 and G2 MSMs and its quotient on one
// device, or, with PERFBOT_G2=host (or SetG2OnDevice(false)), the G2 MSM
// on the host's CPU (groth16.CPU) beside the G1 MSMs. It implements
// groth16.Engine. Calls are serialized; Close releases the device context.
type Engine struct {
	lib    *Library
	device Device

	mu    sync.Mutex
	ctx   *C.perfbot_cuda_ctx
	steps map[string]float64 // seconds per step since the last TakeSteps
	order []string

	g2Device bool // MultiExpG2 runs on the device (PERFBOT_G2 unset or gpu)

	keep  bool                       // KeepG1 and KeepG2 keep points (PERFBOT_GPU_KEEP_POINTS, and no memory error yet)
	kept  []*kept[bls12381.G1Affine] // G1 points on the device across calls, by KeepG1
	kept2 []*kept[bls12381.G2Affine] // G2 points, by KeepG2
}

// kept is a slice of points uploaded once. points holds the caller's slice
// so that its memory, the key MultiExpG1 (or MultiExpG2) finds it by, is
// not reused while the device copy is in use.
type kept[P any] struct {
	points []P
	pts    *C.perfbot_cuda_points
}

// covers returns the offset of points inside k, if points is a part of
// k's slice (the same memory).
func (k *kept[P]) covers(points []P) (uint64, bool) {
	base := uintptr(unsafe.Pointer(unsafe.SliceData(k.points)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(points)))
	var zero P
	size := unsafe.Sizeof(zero)
	if p < base || (p-base)%size != 0 {
		return 0, false
	}
	off := uint64((p - base) / size)
	return off, off+uint64(len(points)) <= uint64(len(k.points))
}

// NewEngine opens a context on device index dev.
func (l *Library) NewEngine(dev int) (*Engine, error) {
	devs, err := l.Devices()
	if err != nil {
		return nil, err
	}
	if dev < 0 || dev >= len(devs) {
		if len(devs) == 0 {
			return nil, fmt.Errorf("%w: the library loaded but sees no CUDA device", ErrNoDevice)
		}
		return nil, fmt.Errorf("device %d: there are %d", dev, len(devs))
	}
	g2, err := g2FromEnv()
	if err != nil {
		return nil, err
	}
	e := &Engine{lib: l, device: devs[dev], steps: map[string]float64{}, keep: keepFromEnv(), g2Device: g2}
	var ce C.perfbot_cuda_error
	if err := cerr("open", C.pb_open(&l.fns, C.int32_t(dev), &e.ctx, &ce), &ce); err != nil {
		return nil, err
	}
	return e, nil
}

// Device describes the engine's device.
func (e *Engine) Device() Device { return e.device }

// Close releases the device context.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.releaseKept()
	if e.ctx != nil {
		C.pb_close(&e.lib.fns, e.ctx)
		e.ctx = nil
	}
	return nil
}

func (e *Engine) record(prefix string, t *C.perfbot_cuda_timings) {
	for i := range int(t.n) {
		e.addStep(prefix+C.GoString(&t.t[i].name[0]), float64(t.t[i].ms)/1e3)
	}
}

// addStep adds seconds to step name (e.mu held).
func (e *Engine) addStep(name string, seconds float64) {
	if _, ok := e.steps[name]; !ok {
		e.order = append(e.order, name)
	}
	e.steps[name] += seconds
}

// TakeSteps returns the device steps' times since the last call, in the
// order they first ran, and resets them.
func (e *Engine) TakeSteps() []Step {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Step, 0, len(e.order))
	for _, n := range e.order {
		out = append(out, Step{Name: n, Seconds: e.steps[n]})
	}
	e.steps, e.order = map[string]float64{}, nil
	return out
}

var errClosed = errors.New("gpu engine is closed")

// MultiExpG1 returns Σ scalars[i]·points[i], computed on the device. Points
// that KeepG1 kept are used where they are; others are copied for the call
// (the step upload_points).
func (e *Engine) MultiExpG1(points []bls12381.G1Affine, scalars []fr.Element) (bls12381.G1Jac, error) {
	if len(points) != len(scalars) || len(points) == 0 {
		// The CPU engine's answer: an error naming the lengths, or
		// infinity for an empty sum.
		return groth16.CPU{}.MultiExpG1(points, scalars)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ctx == nil {
		return bls12381.G1Jac{}, errClosed
	}
	p, err := e.msm(points, scalars)
	if isOutOfMemory(err) && len(e.kept) > 0 {
		// The kept points took the memory this MSM needs: free them, keep
		// no more, and try again once.
		e.releaseKept()
		e.keep = false
		p, err = e.msm(points, scalars)
	}
	if err != nil {
		return p, fmt.Errorf("multiexp g1: %w", err)
	}
	return p, nil
}

// msm runs one MSM with e.mu held: on kept points when points is a part of
// a kept slice, else on a copy made for the call.
func (e *Engine) msm(points []bls12381.G1Affine, scalars []fr.Element) (bls12381.G1Jac, error) {
	var p bls12381.G1Jac
	pts, off := (*C.perfbot_cuda_points)(nil), uint64(0)
	for _, k := range e.kept {
		if o, ok := k.covers(points); ok {
			pts, off = k.pts, o
			break
		}
	}
	if pts == nil {
		var err error
		if pts, err = e.upload(points); err != nil {
			return p, err
		}
		defer C.pb_g1_free(&e.lib.fns, pts)
	}
	var ce C.perfbot_cuda_error
	var t C.perfbot_cuda_timings
	rc := C.pb_msm_g1(&e.lib.fns, e.ctx, pts, C.uint64_t(off), unsafe.Pointer(&scalars[0]), C.uint64_t(len(scalars)), unsafe.Pointer(&p), &t, &ce)
	if err := cerr("msm g1", rc, &ce); err != nil {
		return p, err
	}
	e.record("", &t)
	return p, nil
}

// upload copies points to the device (e.mu held), timed as the step
// upload_points.
func (e *Engine) upload(points []bls12381.G1Affine) (*C.perfbot_cuda_points, error) {
	var ce C.perfbot_cuda_error
	var pts *C.perfbot_cuda_points
	start := time.Now()
	if err := cerr("upload points", C.pb_g1_upload(&e.lib.fns, e.ctx, unsafe.Pointer(&points[0]), C.uint64_t(len(points)), &pts, &ce), &ce); err != nil {
		return nil, err
	}
	e.addStep("upload_points", time.Since(start).Seconds())
	return pts, nil
}

// KeepG1 copies points to the device once and keeps them there until
// Close, so that MultiExpG1 on them, or on any part of them, copies only
// its scalars: groth16.Prove keeps a proving key's G1 queries this way.
// The points must not change while kept (a proving key's never do). It is
// best effort: when the device has no room it keeps nothing, now or
// later, and MultiExpG1 copies points for each call as before; so it does
// when PERFBOT_GPU_KEEP_POINTS=off, the setting for measuring what keeping
// saves.
func (e *Engine) KeepG1(points []bls12381.G1Affine) {
	if len(points) == 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ctx == nil || !e.keep {
		return
	}
	for _, k := range e.kept {
		if _, ok := k.covers(points); ok {
			return
		}
	}
	pts, err := e.upload(points)
	if err != nil {
		if isOutOfMemory(err) {
			e.keep = false
		}
		return // MultiExpG1 copies them, and reports any error that persists
	}
	e.kept = append(e.kept, &kept[bls12381.G1Affine]{points: points, pts: pts})
}

// Kept returns how many points the engine keeps on the device.
func (e *Engine) Kept() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, k := range e.kept {
		n += len(k.points)
	}
	return n
}

// releaseKept frees the kept points of both groups (e.mu held).
func (e *Engine) releaseKept() {
	for _, k := range e.kept {
		C.pb_g1_free(&e.lib.fns, k.pts)
	}
	for _, k := range e.kept2 {
		C.pb_g2_free(&e.lib.fns, k.pts)
	}
	e.kept, e.kept2 = nil, nil
}

// keepFromEnv reads PERFBOT_GPU_KEEP_POINTS: off (or 0, false) turns
// KeepG1 off.
func keepFromEnv() bool {
	switch strings.ToLower(os.Getenv("PERFBOT_GPU_KEEP_POINTS")) {
	case "off", "0", "false", "no":
		return false
	}
	return true
}

// MultiExpG2 returns Σ scalars[i]·points[i]: on the device when G2 is
// there (the default; PERFBOT_G2, SetG2OnDevice), else on the host's
// cores with gnark-crypto (groth16.CPU). On the host the G2 MSM overlaps
// the device's G1 MSMs; on the device the MSMs take turns, and still a
// 2^24 proof is 0.8 s faster on the H100 (open.go, EnvG2). Points that KeepG2 kept are used where
// they are; others are copied for the call (the step g2_upload_points).
// The device steps are named with the prefix g2_ (g2_accumulate, …).
func (e *Engine) MultiExpG2(points []bls12381.G2Affine, scalars []fr.Element) (bls12381.G2Jac, error) {
	if !e.G2OnDevice() || len(points) != len(scalars) || len(points) == 0 {
		// The host path, or the CPU engine's answer: an error naming the
		// lengths, or infinity for an empty sum.
		return groth16.CPU{}.MultiExpG2(points, scalars)
	}
	return e.MultiExpG2Device(points, scalars, 0)
}

// MultiExpG2Device returns Σ scalars[i]·points[i] computed on the device
// whatever SetG2OnDevice says, with windows of windowBits bits (0 picks
// them from the size, as MultiExpG2 does): for tests and measurements.
func (e *Engine) MultiExpG2Device(points []bls12381.G2Affine, scalars []fr.Element, windowBits int) (bls12381.G2Jac, error) {
	if len(points) != len(scalars) || len(points) == 0 {
		return groth16.CPU{}.MultiExpG2(points, scalars)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ctx == nil {
		return bls12381.G2Jac{}, errClosed
	}
	p, err := e.msmG2(points, scalars, windowBits)
	if isOutOfMemory(err) && len(e.kept)+len(e.kept2) > 0 {
		e.releaseKept()
		e.keep = false
		p, err = e.msmG2(points, scalars, windowBits)
	}
	if err != nil {
		return p, fmt.Errorf("multiexp g2: %w", err)
	}
	return p, nil
}

// msmG2 is msm for G2 (e.mu held).
func (e *Engine) msmG2(points []bls12381.G2Affine, scalars []fr.Element, windowBits int) (bls12381.G2Jac, error) {
	var p bls12381.G2Jac
	pts, off := (*C.perfbot_cuda_points)(nil), uint64(0)
	for _, k := range e.kept2 {
		if o, ok := k.covers(points); ok {
			pts, off = k.pts, o
			break
		}
	}
	if pts == nil {
		var err error
		if pts, err = e.uploadG2(points); err != nil {
			return p, err
		}
		defer C.pb_g2_free(&e.lib.fns, pts)
	}
	var ce C.perfbot_cuda_error
	var t C.perfbot_cuda_timings
	rc := C.pb_msm_g2(&e.lib.fns, e.ctx, pts, C.uint64_t(off), unsafe.Pointer(&scalars[0]), C.uint64_t(len(scalars)),
		C.int32_t(windowBits), unsafe.Pointer(&p), &t, &ce)
	if err := cerr("msm g2", rc, &ce); err != nil {
		return p, err
	}
	e.record("g2_", &t)
	return p, nil
}

// uploadG2 copies G2 points to the device (e.mu held), timed as the step
// g2_upload_points.
func (e *Engine) uploadG2(points []bls12381.G2Affine) (*C.perfbot_cuda_points, error) {
	var ce C.perfbot_cuda_error
	var pts *C.perfbot_cuda_points
	start := time.Now()
	if err := cerr("upload g2 points", C.pb_g2_upload(&e.lib.fns, e.ctx, unsafe.Pointer(&points[0]), C.uint64_t(len(points)), &pts, &ce), &ce); err != nil {
		return nil, err
	}
	e.addStep("g2_upload_points", time.Since(start).Seconds())
	return pts, nil
}

// KeepG2 is KeepG1 for G2 points: it copies them to the device once and
// keeps them there until Close, for MultiExpG2 on the device (a proving
// key's B query in G2). Best effort, and off with PERFBOT_GPU_KEEP_POINTS=off,
// as KeepG1. It keeps nothing while the G2 MSM runs on the host.
func (e *Engine) KeepG2(points []bls12381.G2Affine) {
	if len(points) == 0 || !e.G2OnDevice() {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ctx == nil || !e.keep {
		return
	}
	for _, k := range e.kept2 {
		if _, ok := k.covers(points); ok {
			return
		}
	}
	pts, err := e.uploadG2(points)
	if err != nil {
		if isOutOfMemory(err) {
			e.keep = false
		}
		return // MultiExpG2 copies them, and reports any error that persists
	}
	e.kept2 = append(e.kept2, &kept[bls12381.G2Affine]{points: points, pts: pts})
}

// KeptG2 returns how many G2 points the engine keeps on the device.
func (e *Engine) KeptG2() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, k := range e.kept2 {
		n += len(k.points)
	}
	return n
}

// SetG2OnDevice chooses where MultiExpG2 runs: on the device (true) or on
// the host's cores (false), overriding PERFBOT_G2.
func (e *Engine) SetG2OnDevice(on bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.g2Device = on
}

// G2OnDevice reports whether MultiExpG2 runs on the device.
func (e *Engine) G2OnDevice() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.g2Device
}

// OffloadsG2 makes groth16.Prove hand the G2 MSM over whole, as
// OffloadsG1 does for G1, when it runs on the device.
func (e *Engine) OffloadsG2() bool { return e.G2OnDevice() }

func logSize(n int) (int, error) {
	if n < 2 || n&(n-1) != 0 || n > 1<<30 {
		return 0, fmt.Errorf("length %d: want a power of two from 2 to 2^30", n)
	}
	return bits.TrailingZeros(uint(n)), nil
}

// QuotientH computes h = (A·B − C)/(x^n − 1) on the device, with the
// domain and coset of gnark-crypto's fft.Domain, so its result equals
// groth16.CPU's.
func (e *Engine) QuotientH(a, b, c []fr.Element) error {
	n := len(a)
	logN, err := logSize(n)
	if err != nil || len(b) != n || len(c) != n {
		return fmt.Errorf("quotient h: lengths %d, %d, %d; want equal powers of two ≥ 2", len(a), len(b), len(c))
	}
	w, g, err := domainRoots(n)
	if err != nil {
		return fmt.Errorf("quotient h: %w", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ctx == nil {
		return errClosed
	}
	var ce C.perfbot_cuda_error
	var t C.perfbot_cuda_timings
	rc := C.pb_quotient(&e.lib.fns, e.ctx, unsafe.Pointer(&a[0]), unsafe.Pointer(&b[0]), unsafe.Pointer(&c[0]),
		C.int32_t(logN), unsafe.Pointer(&w), unsafe.Pointer(&g), &t, &ce)
	if err := cerr("quotient", rc, &ce); err != nil {
		return fmt.Errorf("quotient h: %w", err)
	}
	e.record("", &t)
	return nil
}

// NTT transforms data in place on the device, natural order in and out,
// with gnark-crypto's root of unity for len(data): forward evaluates,
// inverse interpolates; with coset the points are g·ω^i, g being
// fr's multiplicative generator (gnark-crypto's fft.OnCoset()).
func (e *Engine) NTT(data []fr.Element, inverse, coset bool) error {
	logN, err := logSize(len(data))
	if err != nil {
		return fmt.Errorf("ntt: %w", err)
	}
	w, gen, err := domainRoots(len(data))
	if err != nil {
		return fmt.Errorf("ntt: %w", err)
	}
	var g unsafe.Pointer
	if coset {
		g = unsafe.Pointer(&gen)
	}
	dir := C.int32_t(C.PERFBOT_NTT_FORWARD)
	if inverse {
		dir = C.PERFBOT_NTT_INVERSE
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ctx == nil {
		return errClosed
	}
	var ce C.perfbot_cuda_error
	var t C.perfbot_cuda_timings
	rc := C.pb_ntt(&e.lib.fns, e.ctx, unsafe.Pointer(&data[0]), C.int32_t(logN), dir, unsafe.Pointer(&w), g, &t, &ce)
	if err := cerr("ntt", rc, &ce); err != nil {
		return fmt.Errorf("ntt: %w", err)
	}
	e.record("", &t)
	return nil
}

// OffloadsG1 makes groth16.Prove hand the G1 MSMs over whole (the device
// sorts zero and one scalars into its buckets far faster than the host
// splits them); OffloadsG2 says where the G2 MSM runs.
func (e *Engine) OffloadsG1() bool { return true }

var (
	_ groth16.Offloader   = (*Engine)(nil)
	_ groth16.G2Offloader = (*Engine)(nil)
)
