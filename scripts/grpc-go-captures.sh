#!/usr/bin/env bash
# Makes the captures behind tests/data/grpc/grpc-go-h2c.pcap.gz and
# grpc-go-tls.pcap.gz (with the client's key log, grpc-go-tls.keylog):
# gRPC between grpc-go peers, first over HTTP/2 in cleartext with prior
# knowledge (h2c), then the same calls over TLS; real Linux TCP, tcpdump
# in the client's namespace, across a path of 20 ms each way
# (scripts/relay-path.sh):
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
# One Go program (google.golang.org/grpc, built in the work directory
# from a go.mod written here) is both peers: `lab server [tls]` on
# 10.81.2.1:50051 and `lab client [KEYLOG]`, one TCP connection each
# run; the service rttdoc.Lab registered by hand (a grpc.ServiceDesc, raw
# bytes through a codec of its own: no protoc); grpc-go's defaults kept
# otherwise (its BDP PINGs and WINDOW_UPDATEs; over TLS, ALPN h2 and TLS
# 1.3, Go's key exchange). grpc-go's server sends its SETTINGS as it
# accepts, before the client's preface has arrived.
#
#   grpc-go-h2c.pcap  plaintext (insecure credentials).
#   grpc-go-tls.pcap  TLS: the server presents a self-signed ECDSA P-256
#                     certificate made here with openssl (CN and SAN
#                     rttdoc.test, SAN 10.81.2.1), the client trusts it
#                     alone and writes its secrets in the SSLKEYLOGFILE
#                     format to grpc-go-tls.keylog, with which tshark
#                     decrypts the capture:
#                       tshark -r grpc-go-tls.pcap.gz \
#                         -o tls.keylog_file:grpc-go-tls.keylog \
#                         -d tcp.port==50051,tls
#
# The calls, one after the other:
#   Fast      unary, answered at once (a reply of 50 bytes): one round
#             trip of the path
#   Slow      unary, the handler sleeps 100 ms before answering: the
#             server's think time
#   Feed      server streaming: five messages of 100 bytes, the first at
#             once, then 0.6, 0.9, 0.7 and 1.1 s apart, and the trailers
#             (END_STREAM) straight after the last: pushes the client did
#             not ask for one by one
#   Parallel  three unary calls started at once from three goroutines on
#             the one connection, the handler sleeping 100, 300 and 0 ms
#             (the request's number): streams multiplexed, answered out
#             of order
# then 1 s idle, and the connection closed.
#
# Needs root, ip, tcpdump, openssl, python3 and Go (with access to the Go
# module proxy for google.golang.org/grpc).
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtgrpcgo$$ /tmp/rttdoc-grpc-go
chmod 755 "$work"
extra_cleanup() {
  relay_stop_servers
  ip netns pids "$C" 2>/dev/null | xargs -r kill 2>/dev/null || true
}

# Like relay_capture, but keeps tcpdump's report (packets captured and
# dropped), shows it, and fails when tcpdump dropped any packet. tcpdump
# runs in immediate mode: otherwise what arrives in the last second (the
# server's close_notify and FIN, 40 ms after the client's) may still sit
# in the kernel's capture buffer when tcpdump is stopped, lost without

# --- the server's certificate: self-signed, ECDSA P-256 ----------------
mkdir "$work/lab"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
  -keyout "$work/lab/key.pem" -out "$work/lab/cert.pem" -days 3650 \
  -subj /CN=rttdoc.test \
  -addext subjectAltName=DNS:rttdoc.test,IP:10.81.2.1 2>/dev/null

# --- the peers: one Go program, `lab server` and `lab client KEYLOG` ---
cat > "$work/lab/go.mod" <<'MOD'
module rttdoc.example/grpclab

go 1.24

require google.golang.org/grpc v1.85.0
MOD
cat > "$work/lab/main.go" <<'GO'
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
)

const addr = "10.81.2.1:50051"

// The server's certificate and key (made by the script with openssl), in
// the working directory; the client trusts that certificate alone.
const certFile, keyFile = "cert.pem", "key.pem"

// raw passes messages through as bytes: no protobuf, no protoc.
type raw struct{}

func (raw) Name() string { return "raw" }

func (raw) Marshal(v any) ([]byte, error) {
	switch b := v.(type) {
	case []byte:
		return b, nil
	case *[]byte:
		return *b, nil
	}
	return nil, fmt.Errorf("raw codec: cannot marshal %T", v)
}

func (raw) Unmarshal(data []byte, v any) error {
	p, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("raw codec: cannot unmarshal into %T", v)
	}
	*p = append([]byte(nil), data...) // grpc may reuse data's buffer
	return nil
}

func init() { encoding.RegisterCodec(raw{}) }

func unary(name string, answer func(req []byte) []byte) grpc.MethodDesc {
	return grpc.MethodDesc{
		MethodName: name,
		Handler: func(_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			var req []byte
			if err := dec(&req); err != nil {
				return nil, err
			}
			return answer(req), nil
		},
	}
}

func feed(_ any, ss grpc.ServerStream) error {
	var req []byte
	if err := ss.RecvMsg(&req); err != nil {
		return err
	}
	pauses := []time.Duration{0, 600, 900, 700, 1100}
	for i, pause := range pauses {
		time.Sleep(pause * time.Millisecond)
		if err := ss.SendMsg(bytes.Repeat([]byte{byte('0' + i)}, 100)); err != nil {
			return err
		}
	}
	return nil
}

var lab = grpc.ServiceDesc{
	ServiceName: "rttdoc.Lab",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{
		unary("Fast", func([]byte) []byte { return bytes.Repeat([]byte("f"), 50) }),
		unary("Slow", func([]byte) []byte {
			time.Sleep(100 * time.Millisecond)
			return bytes.Repeat([]byte("s"), 50)
		}),
		unary("Parallel", func(req []byte) []byte {
			ms, err := strconv.Atoi(string(req))
			if err != nil {
				return []byte("bad request")
			}
			time.Sleep(time.Duration(ms) * time.Millisecond)
			return []byte(fmt.Sprintf("slept %d ms", ms))
		}),
	},
	Streams: []grpc.StreamDesc{{StreamName: "Feed", Handler: feed, ServerStreams: true}},
}

// server serves plaintext HTTP/2 (h2c) or, with tls, TLS.
func server(tls_ bool) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	opts := []grpc.ServerOption{grpc.ForceServerCodec(raw{})}
	if tls_ {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			log.Fatal(err)
		}
		// grpc-go's defaults otherwise: ALPN h2, TLS 1.2 at least, 1.3 at most.
		creds := credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}})
		opts = append(opts, grpc.Creds(creds))
	}
	s := grpc.NewServer(opts...)
	s.RegisterService(&lab, struct{}{})
	log.Fatal(s.Serve(lis))
}

// client calls in plaintext (h2c) or, with a key log's path, over TLS,
// writing its secrets there.
func client(keylog string) {
	creds := insecure.NewCredentials()
	if keylog != "" {
		creds = tlsCredentials(keylog)
	}
	run(creds)
}

func tlsCredentials(keylog string) credentials.TransportCredentials {
	pem, err := os.ReadFile(certFile)
	if err != nil {
		log.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		log.Fatal("no certificate in " + certFile)
	}
	// (Left open until the process ends: written as each secret is.)
	kl, err := os.Create(keylog)
	if err != nil {
		log.Fatal(err)
	}
	return credentials.NewTLS(&tls.Config{
		RootCAs:      pool,
		ServerName:   "rttdoc.test",
		KeyLogWriter: kl, // SSLKEYLOGFILE format
	})
}

// run makes the calls, one after the other, on one connection.
func run(creds credentials.TransportCredentials) {
	conn, err := grpc.NewClient(addr,
		grpc.WithTransportCredentials(creds),
		grpc.WithNoProxy(),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(raw{})))
	if err != nil {
		log.Fatal(err)
	}
	call := func(method, req string) []byte {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var resp []byte
		if err := conn.Invoke(ctx, "/rttdoc.Lab/"+method, []byte(req), &resp); err != nil {
			log.Fatalf("%s: %v", method, err)
		}
		return resp
	}
	if n := len(call("Fast", "fast")); n != 50 {
		log.Fatalf("Fast: %d bytes", n)
	}
	if n := len(call("Slow", "slow")); n != 50 {
		log.Fatalf("Slow: %d bytes", n)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	st, err := conn.NewStream(ctx, &grpc.StreamDesc{StreamName: "Feed", ServerStreams: true}, "/rttdoc.Lab/Feed")
	if err != nil {
		log.Fatal(err)
	}
	if err := st.SendMsg([]byte("feed")); err != nil {
		log.Fatal(err)
	}
	if err := st.CloseSend(); err != nil {
		log.Fatal(err)
	}
	got := 0
	for {
		var m []byte
		err := st.RecvMsg(&m)
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatalf("Feed: %v", err)
		}
		got++
	}
	cancel()
	if got != 5 {
		log.Fatalf("Feed: %d messages", got)
	}

	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, ms := range []string{"100", "300", "0"} {
		wg.Add(1)
		go func(ms string) {
			defer wg.Done()
			<-start
			fmt.Printf("Parallel %s: %s\n", ms, call("Parallel", ms))
		}(ms)
	}
	close(start)
	wg.Wait()

	time.Sleep(time.Second)
	if err := conn.Close(); err != nil {
		log.Fatal(err)
	}
}

func main() {
	switch {
	case len(os.Args) == 2 && os.Args[1] == "server":
		server(false)
	case len(os.Args) == 3 && os.Args[1] == "server" && os.Args[2] == "tls":
		server(true)
	case len(os.Args) == 2 && os.Args[1] == "client":
		client("")
	case len(os.Args) == 3 && os.Args[1] == "client":
		client(os.Args[2])
	default:
		log.Fatal("usage: lab server [tls] | lab client [KEYLOG]")
	}
}
GO
(
  cd "$work/lab"
  export GOFLAGS=-mod=mod GOTOOLCHAIN=local
  go mod tidy
  go build -o lab .
)
lab=$work/lab/lab

# --- grpc-go-h2c ------------------------------------------------------
# The peers run in $work/lab (the certificate and key). The server runs
# outside $pids (capture stops those); relay_stop_servers stops it.
cd "$work/lab"
ip netns exec "$S" "$lab" server > "$work/grpc_server.log" 2>&1 &
relay_listening 50051
relay_capture_checked grpc-go-h2c "$lab" client
relay_stop_servers
sleep 0.5

# --- grpc-go-tls ------------------------------------------------------
ip netns exec "$S" "$lab" server tls > "$work/grpc_server_tls.log" 2>&1 &
relay_listening 50051
relay_capture_checked grpc-go-tls "$lab" client "$work/grpc-go-tls.keylog"
relay_stop_servers
sleep 0.5
cp "$work/grpc-go-tls.keylog" "$out/grpc-go-tls.keylog"
ls -l "$out/grpc-go-h2c.pcap.gz" "$out/grpc-go-tls.pcap.gz" "$out/grpc-go-tls.keylog"
