// quicpeer is the QUIC client and server behind scripts/quic-captures.sh:
// quic-go on kernel UDP, so the captures show what a real QUIC stack does
// (Retry, Version Negotiation, the anti-amplification limit, Initial
// probes, 0-RTT) across the script's delayed path.
//
//	quicpeer -server 10.81.2.1:443 -cert chain.pem -key key.pem [-answer N] [-retry] [-versions 1,2] [-0rtt]
//	quicpeer -client 10.81.2.1:443 [-versions 2,1] [-n 2] [-0rtt]
//
// Each stream carries one request line ("GET /\n"), answered with N bytes
// and the stream's end; the client then closes the connection with an
// application close (code 0), so every capture ends the same way.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"strings"
	"time"

	"github.com/quic-go/quic-go"
)

const alpn = "rttdoc"

func main() {
	server := flag.String("server", "", "listen on this UDP address")
	client := flag.String("client", "", "connect to this UDP address")
	cert := flag.String("cert", "", "server: certificate file (PEM, the chain after the leaf)")
	key := flag.String("key", "", "server: private key file (PEM)")
	answer := flag.Int("answer", 10000, "server: bytes answered per request")
	retry := flag.Bool("retry", false, "server: send a Retry to every new connection")
	versions := flag.String("versions", "1", "QUIC versions (1, 2): the server's accepted, the client's offered in order")
	zeroRTT := flag.Bool("0rtt", false, "server: accept 0-RTT; client: send the request in 0-RTT when resuming")
	n := flag.Int("n", 1, "client: connections in sequence, sharing a TLS session cache")
	name := flag.String("name", "quic.rttdoc.test", "client: the server name its ClientHello sends (SNI)")
	flag.Parse()
	conf := &quic.Config{Versions: parseVersions(*versions), Allow0RTT: *zeroRTT}
	switch {
	case *server != "":
		serve(*server, *cert, *key, *answer, *retry, conf)
	case *client != "":
		// One cache across the connections: the second resumes the first's
		// session (and may send 0-RTT with its ticket).
		tlsConf := &tls.Config{InsecureSkipVerify: true, NextProtos: []string{alpn}, ServerName: *name,
			ClientSessionCache: tls.NewLRUClientSessionCache(4)}
		for i := 0; i < *n; i++ {
			if err := fetch(*client, tlsConf, conf, *zeroRTT); err != nil {
				log.Fatalf("connection %d: %v", i+1, err)
			}
		}
	default:
		log.Fatal("need -server or -client")
	}
}

func parseVersions(s string) []quic.Version {
	var vs []quic.Version
	for _, f := range strings.Split(s, ",") {
		switch strings.TrimSpace(f) {
		case "1":
			vs = append(vs, quic.Version1)
		case "2":
			vs = append(vs, quic.Version2)
		default:
			log.Fatalf("unknown QUIC version %q", f)
		}
	}
	return vs
}

func serve(addr, certFile, keyFile string, answer int, retry bool, conf *quic.Config) {
	// LoadX509KeyPair keeps every certificate of the file: the whole chain
	// goes into the server's first flight.
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		log.Fatal(err)
	}
	tlsConf := &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{alpn}}
	udp, err := net.ListenPacket("udp", addr)
	if err != nil {
		log.Fatal(err)
	}
	tr := &quic.Transport{Conn: udp}
	if retry {
		// Validate every client's address first: a Retry answers each
		// Initial without a token (both datagrams of a two-datagram
		// ClientHello; the client acts on the first Retry only).
		tr.VerifySourceAddress = func(net.Addr) bool { return true }
	}
	// Only an early listener hands out connections that may carry 0-RTT.
	var accept func(context.Context) (*quic.Conn, error)
	if conf.Allow0RTT {
		ln, err := tr.ListenEarly(tlsConf, conf)
		if err != nil {
			log.Fatal(err)
		}
		accept = ln.Accept
	} else {
		ln, err := tr.Listen(tlsConf, conf)
		if err != nil {
			log.Fatal(err)
		}
		accept = ln.Accept
	}
	body := bytes.Repeat([]byte("x"), answer)
	for {
		conn, err := accept(context.Background())
		if err != nil {
			log.Fatal(err)
		}
		go func() {
			for {
				str, err := conn.AcceptStream(context.Background())
				if err != nil {
					return // the client closed the connection
				}
				go func() {
					if _, err := bufio.NewReader(str).ReadString('\n'); err != nil {
						str.CancelWrite(1)
						return
					}
					str.Write(body)
					str.Close() // FIN: the client reads to the end
				}()
			}
		}()
	}
}

func fetch(addr string, tlsConf *tls.Config, conf *quic.Config, early bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dial := quic.DialAddr
	if early {
		// DialAddrEarly returns as soon as 0-RTT keys exist (on a resumed
		// session), so the request below goes out in 0-RTT packets.
		dial = quic.DialAddrEarly
	}
	conn, err := dial(ctx, addr, tlsConf, conf)
	if err != nil {
		return err
	}
	str, err := conn.OpenStream()
	if err != nil {
		return err
	}
	if _, err := str.Write([]byte("GET /\n")); err != nil {
		return err
	}
	str.Close() // our side is done: the request and FIN in one frame
	got, err := io.Copy(io.Discard, str)
	if err != nil {
		return err
	}
	state := conn.ConnectionState()
	// On stderr: the capture scripts drop the client's stdout.
	fmt.Fprintf(os.Stderr, "%d bytes, QUIC %s, resumed %v, 0-RTT %v\n", got, state.Version,
		state.TLS.DidResume, state.Used0RTT)
	return conn.CloseWithError(0, "")
}
