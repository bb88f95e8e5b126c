package egress_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"testing"

	"github.com/hookrelay/hookrelay/egress"
)

// denied are the addresses and forms the guard refuses by default. None is
// ever dialled: Check decides on the address alone.
var denied = []string{
	"127.0.0.1", "127.0.0.2", "::1", // loopback
	"10.1.2.3", "172.16.0.1", "192.168.1.1", // RFC 1918
	"169.254.169.254", "169.254.0.1", "fe80::1", // link-local, cloud metadata
	"100.64.0.1",              // CGNAT
	"fc00::1", "fd12:3456::1", // IPv6 unique local
	"0.0.0.0", "::", // unspecified
	"224.0.0.1", "ff02::1", // multicast
	"255.255.255.255",                     // broadcast
	"::ffff:127.0.0.1", "::ffff:10.0.0.1", // IPv4-mapped
	"64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", // NAT64 of loopback and metadata
	"2002:7f00:1::1", "2002:a9fe:a9fe::1", // 6to4 of loopback and metadata
}

func TestCheckDeniesSpecialAddresses(t *testing.T) {
	g := egress.New(nil)
	for _, s := range denied {
		if err := g.Check(netip.MustParseAddr(s)); !errors.Is(err, egress.ErrBlocked) {
			t.Errorf("Check(%s) = %v, want ErrBlocked", s, err)
		}
	}
	for _, s := range []string{"93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"} {
		if err := g.Check(netip.MustParseAddr(s)); err != nil {
			t.Errorf("Check(%s) = %v, want allowed", s, err)
		}
	}
}

func TestAllowListOpensOnlyItsPrefixes(t *testing.T) {
	allow, err := egress.ParsePrefixes("127.0.0.2, 10.0.0.0/8,fd00::/8")
	if err != nil {
		t.Fatal(err)
	}
	g := egress.New(allow)
	for _, s := range []string{"127.0.0.2", "10.9.9.9", "fd00::5"} {
		if err := g.Check(netip.MustParseAddr(s)); err != nil {
			t.Errorf("Check(%s) = %v, want allowed", s, err)
		}
	}
	for _, s := range []string{"127.0.0.1", "192.168.0.1", "169.254.169.254"} {
		if err := g.Check(netip.MustParseAddr(s)); !errors.Is(err, egress.ErrBlocked) {
			t.Errorf("Check(%s) = %v, want ErrBlocked", s, err)
		}
	}
	if _, err := egress.ParsePrefixes("10.0.0.0/33"); err == nil {
		t.Error("ParsePrefixes accepted 10.0.0.0/33")
	}
}

func TestCheckURLRefusesLiteralDeniedHosts(t *testing.T) {
	g := egress.New(nil)
	for _, u := range []string{
		"http://127.0.0.1:8080/v1/events", "http://[::1]/", "http://0.0.0.0:9/",
		"http://169.254.169.254/latest/meta-data/", "http://[::ffff:127.0.0.1]/",
		"http://localhost:8080/", "http://api.localhost/", "http://LOCALHOST./",
		"http://2130706433/", "http://127.1/", "http://0x7f.1/", "http://[fd00::1]/",
	} {
		if err := g.CheckURL(u); !errors.Is(err, egress.ErrBlocked) {
			t.Errorf("CheckURL(%s) = %v, want ErrBlocked", u, err)
		}
	}
	for _, u := range []string{"https://hooks.example.com/x", "http://93.184.216.34/", "http://internal.example/"} {
		if err := g.CheckURL(u); err != nil {
			t.Errorf("CheckURL(%s) = %v, want nil (names are checked when dialled)", u, err)
		}
	}
}

// flipResolver answers first with first, then with later: a DNS rebinding.
type flipResolver struct {
	first, later netip.Addr
	lookups      atomic.Int32
}

func (r *flipResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	if r.lookups.Add(1) == 1 {
		return []netip.Addr{r.first}, nil
	}
	return []netip.Addr{r.later}, nil
}

// listen serves on addr, counting the connections it accepts.
func listen(t *testing.T, addr string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

// TestDialsTheCheckedAddress: with only 127.0.0.2 allowed and a resolver
// that answers 127.0.0.2 once and 127.0.0.1 after, every request reaches
// 127.0.0.2 and the name is looked up once per connection, never again
// between the check and the dial.
func TestDialsTheCheckedAddress(t *testing.T) {
	good, goodHits := listen(t, "127.0.0.2:0")
	_, port, _ := net.SplitHostPort(good.Listener.Addr().String())
	_, badHits := listen(t, "127.0.0.1:"+port)
	r := &flipResolver{first: netip.MustParseAddr("127.0.0.2"), later: netip.MustParseAddr("127.0.0.1")}
	g := egress.New([]netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")})
	g.Resolver = r
	client := &http.Client{Transport: &http.Transport{DialContext: g.DialContext, DisableKeepAlives: true}}
	resp, err := client.Get("http://rebind.test:" + port + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if goodHits.Load() != 1 || badHits.Load() != 0 || r.lookups.Load() != 1 {
		t.Fatalf("127.0.0.2 got %d, 127.0.0.1 got %d, lookups %d: want 1, 0, 1",
			goodHits.Load(), badHits.Load(), r.lookups.Load())
	}
	// The next connection resolves afresh, gets 127.0.0.1, and is refused
	// before any connection is made.
	_, err = client.Get("http://rebind.test:" + port + "/")
	if !errors.Is(err, egress.ErrBlocked) || badHits.Load() != 0 {
		t.Fatalf("second request: %v, 127.0.0.1 got %d: want ErrBlocked and 0", err, badHits.Load())
	}
}

// TestBlockedBeforeConnecting: by default a name that resolves to loopback,
// and a literal loopback address, are refused without a connection.
func TestBlockedBeforeConnecting(t *testing.T) {
	srv, hits := listen(t, "127.0.0.1:0")
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	g := egress.New(nil)
	g.Resolver = &flipResolver{first: netip.MustParseAddr("127.0.0.1"), later: netip.MustParseAddr("127.0.0.1")}
	for _, host := range []string{"internal.test", "127.0.0.1", "[::ffff:127.0.0.1]"} {
		_, err := g.DialContext(context.Background(), "tcp", net.JoinHostPort(trim(host), port))
		if !errors.Is(err, egress.ErrBlocked) {
			t.Errorf("dial %s: %v, want ErrBlocked", host, err)
		}
	}
	if hits.Load() != 0 {
		t.Fatalf("the listener accepted %d connections, want 0", hits.Load())
	}
}

func trim(host string) string {
	if len(host) > 1 && host[0] == '[' {
		return host[1 : len(host)-1]
	}
	return host
}

// TestAllowedLoopbackConnects: with loopback allowed (as under `hookrelay
// dev`), the same dial reaches the listener.
func TestAllowedLoopbackConnects(t *testing.T) {
	srv, hits := listen(t, "127.0.0.1:0")
	g := egress.New(egress.Loopback)
	client := &http.Client{Transport: &http.Transport{DialContext: g.DialContext}}
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if hits.Load() != 1 {
		t.Fatalf("hits %d, want 1", hits.Load())
	}
}
