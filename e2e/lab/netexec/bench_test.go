package netexec

import (
	"context"
	"testing"
	"time"
)

// BenchmarkHostnameNewConnection is one /hostname on a fresh loopback connection: the floor
// under ConnRate's figure on this machine.
func BenchmarkHostnameNewConnection(b *testing.B) {
	s, cancel := benchServer(b)
	defer cancel()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Hostname(ctx, NetDial, s.HTTPAddr().String()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSessionExchange is one echo over the long-lived TCP line connection.
func BenchmarkSessionExchange(b *testing.B) {
	s, cancel := benchServer(b)
	defer cancel()
	ctx, stop := context.WithTimeout(context.Background(), time.Minute)
	defer stop()
	sess, err := OpenSession(ctx, NetDial, s.TCPLineAddr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := sess.exchange(ctx, "echo 1"); err != nil {
			b.Fatal(err)
		}
	}
}

func benchServer(b *testing.B) (*Server, func()) {
	s, err := New(Options{Hostname: "bench", ListenIP: "127.0.0.1", Log: quietLog()})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Serve(ctx); close(done) }()
	return s, func() { cancel(); <-done }
}
