package main

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfbot/perfbot/github/webhook"
)

type countingSink struct{ n atomic.Int64 }

func (s *countingSink) Handle(context.Context, webhook.Event) error { s.n.Add(1); return nil }

// A slow-loris client holding 100 connections, each with half a request's
// headers, does not stop a signed delivery from being answered at once;
// the server cuts each of those connections after the header timeout; and
// headers over the size limit are refused with 431. The limits here are
// short so the test is quick; the defaults are checked to be set.
func TestHTTPServerOutlastsASlowLorisClient(t *testing.T) {
	t.Parallel()
	secret := []byte("loris-secret")
	sink := &countingSink{}
	limits := httpLimits{header: 400 * time.Millisecond, read: 2 * time.Second, write: 2 * time.Second, idle: time.Second, maxHeaderBytes: 4 << 10}
	srv := newHTTPServer(&webhook.Handler{Secret: secret, Sink: sink}, limits)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	addr := ln.Addr().String()

	var slow []net.Conn
	for range 100 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := io.WriteString(c, "POST /webhook HTTP/1.1\r\nHost: perfbot\r\nX-GitHub-Event: ping\r\n"); err != nil {
			t.Fatal(err)
		}
		slow = append(slow, c)
	}

	body := `{"zen":"Keep it logically awesome.","hook_id":1}`
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(body))
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/webhook", strings.NewReader(body))
	req.Header.Set("X-GitHub-Event", "ping")
	req.Header.Set("X-GitHub-Delivery", "loris-1")
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(m.Sum(nil)))
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if took := time.Since(start); resp.StatusCode != http.StatusOK || strings.TrimSpace(string(text)) != "pong" || took > 300*time.Millisecond {
		t.Errorf("signed ping beside 100 slow connections: %d %q after %v; want 200 pong at once", resp.StatusCode, text, took)
	}

	// Every slow connection is closed by the server once its headers are
	// late: reading gets an end (or a 408 and then the end), within the
	// header timeout and a margin.
	deadline := time.Now().Add(limits.header + 2*time.Second)
	cut := 0
	for _, c := range slow {
		c.SetReadDeadline(deadline)
		if _, err := io.Copy(io.Discard, c); err == nil {
			cut++ // EOF: closed by the server
		}
	}
	if cut != len(slow) {
		t.Errorf("%d of %d slow connections closed by the server within %v", cut, len(slow), limits.header+2*time.Second)
	}

	// Headers over the limit: 431.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /webhook HTTP/1.1\r\nHost: perfbot\r\nX-Big: %s\r\n\r\n", strings.Repeat("x", 8<<10))
	status, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.Contains(status, "431") {
		t.Errorf("oversized headers: %q (%v); want 431", status, err)
	}
	if sink.n.Load() != 0 {
		t.Errorf("the sink got %d events from pings and refused requests", sink.n.Load())
	}

	d := newHTTPServer(nil, defaultHTTPLimits)
	if d.ReadHeaderTimeout <= 0 || d.ReadTimeout <= 0 || d.WriteTimeout <= 0 || d.IdleTimeout <= 0 || d.MaxHeaderBytes <= 0 || d.MaxHeaderBytes > 1<<20 {
		t.Errorf("default server limits %+v: every timeout and a header limit (at most Go's 1 MiB default) must be set", d)
	}
}
