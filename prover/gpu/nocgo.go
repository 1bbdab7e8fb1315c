//go:build !cgo

package gpu

import (
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Available is false: without cgo this binary cannot dlopen the library.
const Available = false

// Library and Engine exist so that callers compile; Open never returns one.
type Library struct{ Path string }

func load(string) (*Library, error) { return nil, ErrNoLibrary }

func (l *Library) Devices() ([]Device, error)     { return nil, ErrNoLibrary }
func (l *Library) NewEngine(int) (*Engine, error) { return nil, ErrNoLibrary }

type Engine struct{}

func (e *Engine) Device() Device    { return Device{} }
func (e *Engine) Close() error      { return nil }
func (e *Engine) TakeSteps() []Step { return nil }
func (e *Engine) MultiExpG1([]bls12381.G1Affine, []fr.Element) (bls12381.G1Jac, error) {
	return bls12381.G1Jac{}, ErrNoLibrary
}
func (e *Engine) MultiExpG2([]bls12381.G2Affine, []fr.Element) (bls12381.G2Jac, error) {
	return bls12381.G2Jac{}, ErrNoLibrary
}
func (e *Engine) KeepG1([]bls12381.G1Affine)                       {}
func (e *Engine) Kept() int                                        { return 0 }
func (e *Engine) QuotientH(a, b, c []fr.Element) error             { return ErrNoLibrary }
func (e *Engine) NTT(data []fr.Element, inverse, coset bool) error { return ErrNoLibrary }
func (e *Engine) MultiExpG2Device([]bls12381.G2Affine, []fr.Element, int) (bls12381.G2Jac, error) {
	return bls12381.G2Jac{}, ErrNoLibrary
}
func (e *Engine) KeepG2([]bls12381.G2Affine) {}
func (e *Engine) KeptG2() int                { return 0 }
func (e *Engine) SetG2OnDevice(bool)         {}
func (e *Engine) G2OnDevice() bool           { return false }
func (e *Engine) OffloadsG2() bool           { return false }
