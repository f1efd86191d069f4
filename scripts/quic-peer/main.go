// quicpeer is the QUIC client and server behind scripts/quic-captures.sh:
// quic-go on kernel UDP, so the captures show what a real QUIC stack does
// (Retry, Version Negotiation, the anti-amplification limit, Initial
// probes, 0-RTT) across the script's delayed path; with -h3, the HTTP/3
// server (quic-go/http3) that a browser loads a page from in
// scripts/quic-browser-captures.sh.
//
//	quicpeer -server 10.81.2.1:443 -cert chain.pem -key key.pem [-answer N] [-retry] [-versions 1,2] [-0rtt] [-h3 [-tcp]]
//	quicpeer -client 10.81.2.1:443 [-versions 2,1] [-n 2] [-0rtt]
//
// Each stream carries one request line ("GET /\n"), answered with N bytes
// and the stream's end; the client then closes the connection with an
// application close (code 0), so every capture ends the same way.
//
// With -h3 the server speaks HTTP/3 instead (ALPN "h3"): GET / answers a
// small HTML page showing three images, /a.png, /b.png and /c.png, each a
// PNG of about 20 KB (noise, which does not compress, from a fixed seed:
// the same bytes every run), so a browser makes four requests on the
// connection; GET /text.html answers a page of text only (nothing else to
// load: one request). It logs each request on stderr.
//
// With -h3 -tcp the server also serves the same pages over TLS on TCP at
// the same address and port (net/http: HTTP/2, or HTTP/1.1 for a client
// that does not offer h2), each response announcing HTTP/3 on that port
// (Alt-Svc: h3=":443"; ma=86400), as a server does that a browser first
// reaches over TCP and then over QUIC.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"image"
	"image/png"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
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
	h3 := flag.Bool("h3", false, "server: serve HTTP/3 (a page and three images) instead of request lines")
	overTCP := flag.Bool("tcp", false, "server, with -h3: serve the page over TLS on TCP too (HTTP/2, HTTP/1.1), with Alt-Svc")
	flag.Parse()
	if *overTCP && !*h3 {
		log.Fatal("-tcp needs -h3")
	}
	conf := &quic.Config{Versions: parseVersions(*versions), Allow0RTT: *zeroRTT}
	switch {
	case *server != "":
		serve(*server, *cert, *key, *answer, *retry, *h3, *overTCP, conf)
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

func serve(addr, certFile, keyFile string, answer int, retry, h3, overTCP bool, conf *quic.Config) {
	// LoadX509KeyPair keeps every certificate of the file: the whole chain
	// goes into the server's first flight.
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		log.Fatal(err)
	}
	tlsConf := &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{alpn}}
	if h3 {
		tlsConf = http3.ConfigureTLSConfig(tlsConf) // ALPN "h3"
	}
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
	var ln http3.QUICListener
	if conf.Allow0RTT {
		ln, err = tr.ListenEarly(tlsConf, conf)
	} else {
		ln, err = tr.Listen(tlsConf, conf)
	}
	if err != nil {
		log.Fatal(err)
	}
	if h3 {
		if overTCP {
			go serveTCP(addr, cert)
		}
		srv := &http3.Server{Handler: pageHandler(), QUICConfig: conf}
		log.Fatal(srv.ServeListener(ln))
	}
	body := bytes.Repeat([]byte("x"), answer)
	for {
		conn, err := ln.Accept(context.Background())
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

// pageHandler serves -h3's page: GET / and its three images; and GET
// /text.html, a page of text only.
func pageHandler() http.Handler {
	const page = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>rttdoc QUIC</title><link rel="icon" href="data:,"></head>
<body><p>Three images over HTTP/3:</p>
<img src="/a.png" width="72" height="72"> <img src="/b.png" width="72" height="72"> <img src="/c.png" width="72" height="72">
</body></html>
`
	// A page with nothing else to load (no images, no favicon): one request.
	const text = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>rttdoc text</title><link rel="icon" href="data:,"></head>
<body><p>Only text.</p></body></html>
`
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page)
	})
	mux.HandleFunc("GET /text.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, text)
	})
	for i, name := range []string{"a", "b", "c"} {
		img := noisePNG(uint64(i + 1))
		mux.HandleFunc("GET /"+name+".png", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "image/png")
			w.Header().Set("Content-Length", strconv.Itoa(len(img)))
			w.Write(img)
		})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.Printf("%s %s %s from %s", r.Proto, r.Method, r.URL.Path, r.RemoteAddr)
		mux.ServeHTTP(w, r)
	})
}

// serveTCP serves -h3's page over TLS on TCP at ADDR (-tcp): HTTP/2 or
// HTTP/1.1 (net/http offers both in ALPN), every response with an Alt-Svc
// header announcing HTTP/3 on ADDR's port for a day, so that a browser
// uses QUIC for its next connection to the origin.
func serveTCP(addr string, cert tls.Certificate) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		log.Fatal(err)
	}
	altSvc := fmt.Sprintf(`%s=":%s"; ma=86400`, http3.NextProtoH3, port)
	page := pageHandler()
	srv := &http.Server{
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Alt-Svc", altSvc)
			page.ServeHTTP(w, r)
		}),
	}
	log.Fatal(srv.ServeTLS(ln, "", ""))
}

// noisePNG is a 72 x 72 RGBA PNG of noise from SEED: about 20 KB, as
// noise does not compress.
func noisePNG(seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 0x72747464))
	img := image.NewNRGBA(image.Rect(0, 0, 72, 72))
	for i := range img.Pix {
		img.Pix[i] = byte(rng.Uint32())
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		log.Fatal(err)
	}
	return b.Bytes()
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
