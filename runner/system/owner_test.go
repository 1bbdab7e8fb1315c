package system

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestOwnerIsGoneOnlyWhenItsProcessIs(t *testing.T) {
	me := Owner()
	if me == "" {
		t.Skip("this host's /proc gives no boot id or pid namespace")
	}
	if OwnerGone(me) {
		t.Fatalf("OwnerGone(%q) of this very process = true", me)
	}
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	owner, err := ownerOf(child.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if OwnerGone(owner) {
		t.Fatalf("OwnerGone(%q) of a live child = true", owner)
	}
	// Killed but not reaped: a zombie has stopped measuring.
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !OwnerGone(owner) {
		if time.Now().After(deadline) {
			t.Fatalf("OwnerGone(%q) of a killed, unreaped child stayed false", owner)
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = child.Wait()
	if !OwnerGone(owner) {
		t.Errorf("OwnerGone(%q) of a reaped child = false", owner)
	}

	parts := strings.Split(me, "/")
	for name, o := range map[string]string{
		// A pid alive now but started at another time: a reused pid.
		"reused pid": fmt.Sprintf("%s/%s/%d/%d", parts[0], parts[1], os.Getpid(), 1),
	} {
		if !OwnerGone(o) {
			t.Errorf("%s: OwnerGone(%q) = false, want true", name, o)
		}
	}
	for name, o := range map[string]string{
		"another boot":           "00000000-0000-0000-0000-000000000000/" + parts[1] + "/" + parts[2] + "/" + parts[3],
		"another namespace":      parts[0] + "/pid:[1]/" + parts[2] + "/1",
		"another boot, dead pid": "00000000-0000-0000-0000-000000000000/" + parts[1] + "/999999999/1",
		"empty":                  "",
		"three parts":            "a/b/c",
		"pid not a number":       parts[0] + "/" + parts[1] + "/x/1",
		"pid zero":               parts[0] + "/" + parts[1] + "/0/1",
	} {
		if OwnerGone(o) {
			t.Errorf("%s: OwnerGone(%q) = true; a process it cannot check must not be judged gone", name, o)
		}
	}
}
