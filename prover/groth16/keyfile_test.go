package groth16

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	mrand "math/rand/v2"
	"os"
	"reflect"
	"testing"

	"github.com/perfbot/perfbot/prover/r1cs"
)

func encodeKeys(t *testing.T, pk *ProvingKey, vk *VerifyingKey) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteKeys(&buf, pk, vk); err != nil {
		t.Fatalf("WriteKeys: %v", err)
	}
	return buf.Bytes()
}

func TestKeyFileRoundTrip(t *testing.T) {
	f := smallFixture(t)
	data := encodeKeys(t, f.pk, f.vk)
	pk, vk, err := ReadKeys(bytes.NewReader(data), f.pk.Shape)
	if err != nil {
		t.Fatalf("ReadKeys: %v", err)
	}
	if !reflect.DeepEqual(pk, f.pk) {
		t.Errorf("proving key changed in the round trip")
	}
	if !reflect.DeepEqual(vk, f.vk) {
		t.Errorf("verifying key changed in the round trip")
	}
	// The header's counts, then its checksum.
	wantLen := keyHeaderSize + 2*((pk.NumVariables()+7)/8) +
		g1Size*(3+len(vk.IC)+len(pk.A)+len(pk.B1)+len(pk.L)+len(pk.H)) +
		g2Size*(3+len(pk.B2)) + 32
	if len(data) != wantLen {
		t.Errorf("key file is %d bytes, the format says %d", len(data), wantLen)
	}
}

func TestKeyFileRoundTripKeepsRandomFlag(t *testing.T) {
	f := smallFixture(t)
	rpk, rvk, err := RandomKeys(f.cs, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pk, vk, err := ReadKeys(bytes.NewReader(encodeKeys(t, rpk, rvk)), rpk.Shape)
	if err != nil {
		t.Fatal(err)
	}
	if !pk.Random || !vk.Random || !reflect.DeepEqual(pk, rpk) {
		t.Errorf("random keys did not survive the round trip (Random %v/%v)", pk.Random, vk.Random)
	}
}

func TestKeyFileWithAFlippedByteIsCorrupt(t *testing.T) {
	f := smallFixture(t)
	data := encodeKeys(t, f.pk, f.vk)
	// Every header byte, the first payload bytes (densities), random bytes
	// in the points and the trailer.
	var positions []int
	for i := 0; i < keyHeaderSize+64; i++ {
		positions = append(positions, i)
	}
	rng := mrand.New(mrand.NewPCG(1, 2))
	for range 200 {
		positions = append(positions, keyHeaderSize+rng.IntN(len(data)-keyHeaderSize))
	}
	for i := len(data) - 40; i < len(data); i++ {
		positions = append(positions, i)
	}
	bad := bytes.Clone(data)
	for _, pos := range positions {
		bit := byte(1) << rng.IntN(8)
		bad[pos] ^= bit
		_, _, err := ReadKeys(bytes.NewReader(bad), f.pk.Shape)
		if !errors.Is(err, ErrCorruptKey) {
			t.Errorf("byte %d of %d flipped: ReadKeys = %v, want ErrCorruptKey", pos, len(data), err)
		}
		bad[pos] ^= bit
	}
}

func TestKeyFileTruncatedOrExtendedIsCorrupt(t *testing.T) {
	f := smallFixture(t)
	data := encodeKeys(t, f.pk, f.vk)
	for _, n := range []int{0, 1, 8, 12, keyHeaderSize - 1, keyHeaderSize, keyHeaderSize + 1, len(data) / 2, len(data) - 33, len(data) - 32, len(data) - 1} {
		_, _, err := ReadKeys(bytes.NewReader(data[:n]), f.pk.Shape)
		if !errors.Is(err, ErrCorruptKey) {
			t.Errorf("truncated to %d of %d bytes: ReadKeys = %v, want ErrCorruptKey", n, len(data), err)
		}
	}
	_, _, err := ReadKeys(bytes.NewReader(append(bytes.Clone(data), 0)), f.pk.Shape)
	if !errors.Is(err, ErrCorruptKey) {
		t.Errorf("one trailing byte: ReadKeys = %v, want ErrCorruptKey", err)
	}
}

func TestKeyFileOfAnotherCircuitIsShapeMismatch(t *testing.T) {
	f := smallFixture(t)
	data := encodeKeys(t, f.pk, f.vk)
	other := Shape(buildCircuit(r1cs.Setup, 8, 1, small))
	_, _, err := ReadKeys(bytes.NewReader(data), other)
	if !errors.Is(err, ErrShapeMismatch) {
		t.Fatalf("ReadKeys(other shape) = %v, want ErrShapeMismatch", err)
	}
	if errors.Is(err, ErrCorruptKey) {
		t.Errorf("a shape mismatch is also reported as corruption: %v", err)
	}
}

func TestWriteKeysRejectsMismatchedPair(t *testing.T) {
	f := smallFixture(t)
	_, vk, err := RandomKeys(f.cs, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteKeys(&bytes.Buffer{}, f.pk, vk); err == nil {
		t.Errorf("WriteKeys(pk, another key's vk) = nil error")
	}
}

func TestLoadOrSetupCachesAndRegeneratesCorruptFile(t *testing.T) {
	dir := t.TempDir()
	cs := buildCircuit(r1cs.Prove|r1cs.Setup, 21, 1, small)

	pk1, vk1, fromCache, warns, err := LoadOrSetup(dir, cs, rand.Reader, false)
	if err != nil || fromCache || len(warns) != 0 {
		t.Fatalf("first LoadOrSetup: fromCache=%v warnings=%v err=%v; want a fresh setup", fromCache, warns, err)
	}
	path := CachePath(dir, pk1.Shape, false)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no cache file: %v", err)
	}
	pk2, vk2, fromCache, warns, err := LoadOrSetup(dir, cs, rand.Reader, false)
	if err != nil || !fromCache || len(warns) != 0 {
		t.Fatalf("second LoadOrSetup: fromCache=%v warnings=%v err=%v; want the cached keys", fromCache, warns, err)
	}
	if !reflect.DeepEqual(pk1, pk2) || !reflect.DeepEqual(vk1, vk2) {
		t.Fatalf("cached keys differ from the ones written")
	}

	// Corrupt one byte in the middle of the points.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0x40
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	pk3, vk3, fromCache, warns, err := LoadOrSetup(dir, cs, rand.Reader, false)
	if err != nil || fromCache {
		t.Fatalf("LoadOrSetup after corruption: fromCache=%v err=%v; want a new setup", fromCache, err)
	}
	if len(warns) != 1 || !errors.Is(warns[0], ErrCorruptKey) {
		t.Fatalf("warnings = %v, want one wrapping ErrCorruptKey", warns)
	}
	if reflect.DeepEqual(pk3.Alpha1, pk1.Alpha1) {
		t.Errorf("regenerated keys equal the old ones; toxic waste reused?")
	}
	proof, _, err := Prove(context.Background(), pk3, cs, randScalar(t), randScalar(t), ProveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(vk3, proof, publicInputs(cs)); err != nil {
		t.Fatalf("proof with regenerated keys: Verify = %v", err)
	}
	// And the rewritten file is good again.
	if _, _, fromCache, warns, err := LoadOrSetup(dir, cs, rand.Reader, false); err != nil || !fromCache || len(warns) != 0 {
		t.Fatalf("LoadOrSetup after regeneration: fromCache=%v warnings=%v err=%v", fromCache, warns, err)
	}
	// No temporary files left behind.
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("cache dir holds %d entries, want 1", len(entries))
	}
}

func TestLoadOrSetupRegeneratesMismatchedShapeAndKeepsRandomApart(t *testing.T) {
	dir := t.TempDir()
	cs := buildCircuit(r1cs.Setup, 21, 1, small)
	other := buildCircuit(r1cs.Setup, 22, 1, small)

	rpk, _, fromCache, warns, err := LoadOrSetup(dir, cs, rand.Reader, true)
	if err != nil || fromCache || len(warns) != 0 || !rpk.Random {
		t.Fatalf("random LoadOrSetup: random=%v fromCache=%v warnings=%v err=%v", rpk.Random, fromCache, warns, err)
	}
	// Another circuit's keys under this circuit's file name.
	opk, ovk, err := RandomKeys(other, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteKeys(&buf, opk, ovk); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(CachePath(dir, rpk.Shape, true), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	pk, _, fromCache, warns, err := LoadOrSetup(dir, cs, rand.Reader, true)
	if err != nil || fromCache || len(warns) != 1 || !errors.Is(warns[0], ErrShapeMismatch) {
		t.Fatalf("LoadOrSetup over a mismatched file: fromCache=%v warnings=%v err=%v", fromCache, warns, err)
	}
	if pk.Shape != rpk.Shape || !pk.Random {
		t.Errorf("regenerated keys have shape %s random=%v", pk.Shape, pk.Random)
	}
	// Real keys do not come from the random file.
	spk, _, fromCache, _, err := LoadOrSetup(dir, cs, rand.Reader, false)
	if err != nil || fromCache || spk.Random {
		t.Fatalf("setup LoadOrSetup: fromCache=%v random=%v err=%v", fromCache, spk.Random, err)
	}
	// Nor from random keys copied under the real keys' name.
	data, err := os.ReadFile(CachePath(dir, rpk.Shape, true))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(CachePath(dir, rpk.Shape, false), data, 0o644); err != nil {
		t.Fatal(err)
	}
	spk, _, fromCache, warns, err = LoadOrSetup(dir, cs, rand.Reader, false)
	if err != nil || fromCache || spk.Random || len(warns) != 1 {
		t.Fatalf("setup LoadOrSetup over random keys: fromCache=%v random=%v warnings=%v err=%v", fromCache, spk.Random, warns, err)
	}
}
