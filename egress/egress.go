// Package egress keeps hookrelay's outgoing HTTP away from the network it
// runs in. A Guard resolves a receiver's host once, checks every address it
// resolves to against a deny list (code.dny.dev/ssrf's: loopback, private,
// link-local and metadata, CGNAT, unique-local, multicast, broadcast,
// unspecified, and the IPv4-mapped, NAT64 and 6to4 forms), and dials the
// address it checked, so that a second resolution (DNS rebinding) cannot slip
// past. An allow list of prefixes opens chosen networks again.
package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"code.dny.dev/ssrf"
)

// ErrBlocked is the error of a destination the guard refuses.
var ErrBlocked = errors.New("destination blocked")

// Resolver looks a host up; *net.Resolver is one. Tests give their own.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Guard decides which addresses hookrelay may send to, and dials only those.
type Guard struct {
	guardian *ssrf.Guardian
	// Resolver resolves hosts; nil means net.DefaultResolver.
	Resolver Resolver
	// Dialer makes the connection; its Control is replaced by the guard's
	// own check of the address being connected.
	Dialer net.Dialer
}

// New returns a Guard that denies what code.dny.dev/ssrf denies, on any port,
// but for the prefixes in allow.
func New(allow []netip.Prefix) *Guard {
	var v4, v6 []netip.Prefix
	for _, p := range allow {
		if p.Addr().Is4() {
			v4 = append(v4, p)
		} else {
			v6 = append(v6, p)
		}
	}
	g := ssrf.New(ssrf.WithAnyPort(), ssrf.WithAllowedV4Prefixes(v4...), ssrf.WithAllowedV6Prefixes(v6...))
	return &Guard{guardian: g, Dialer: net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}}
}

// Loopback are the loopback prefixes, which `hookrelay dev` allows.
var Loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// LoopbackURL tells whether raw's host is this machine wherever the URL is
// used: a loopback or unspecified address, or a name that always means
// loopback ("localhost" and its subdomains). A receiver given such a URL
// reaches itself, not hookrelay.
func LoopbackURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && (a.Unmap().IsLoopback() || a.IsUnspecified())
}

// ParsePrefixes reads a comma-separated list of CIDR prefixes (a bare address
// is a /32 or /128).
func ParsePrefixes(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !strings.Contains(f, "/") {
			a, err := netip.ParseAddr(f)
			if err != nil {
				return nil, fmt.Errorf("egress: %q is not an address or CIDR prefix", f)
			}
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, fmt.Errorf("egress: %q is not a CIDR prefix: %w", f, err)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// Check tells whether addr may be sent to: nil, or an error wrapping
// ErrBlocked that says why not.
func (g *Guard) Check(addr netip.Addr) error {
	addr = addr.Unmap()
	if err := g.guardian.SafeAddr(addr); err != nil {
		return fmt.Errorf("%w: %w", ErrBlocked, err)
	}
	return nil
}

// CheckURL refuses a URL whose host is a literal address the guard denies, or
// a name that always means loopback ("localhost" and its subdomains). Other
// names are checked when an attempt resolves them.
func (g *Guard) CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return g.Check(netip.IPv6Loopback())
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return g.Check(a)
	}
	if numeric(host) {
		return fmt.Errorf("%w: %q is a numeric host in a non-standard form", ErrBlocked, host)
	}
	return nil
}

// numeric tells whether host looks like an address in a form inet_aton
// accepts and netip does not (2130706433, 127.1, 0x7f.1): some resolvers
// turn those into addresses, so they are refused outright.
func numeric(host string) bool {
	labels := strings.Split(strings.ToLower(host), ".")
	for _, l := range labels {
		digits := "0123456789"
		if h, ok := strings.CutPrefix(l, "0x"); ok {
			l, digits = h, "0123456789abcdef"
		}
		if l == "" || strings.Trim(l, digits) != "" {
			return false
		}
	}
	return true
}

// DialContext is an http.Transport's dial: it resolves the host once, refuses
// the whole name if any address it resolves to is denied, and connects to the
// checked addresses in order. The dialer's Control checks again the address
// actually connected.
func (g *Guard) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	addrs, err := g.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	d := g.Dialer
	d.Control = g.control
	var firstErr error
	for _, a := range addrs {
		c, err := d.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return c, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, firstErr
}

// resolve returns the host's addresses, every one of them checked.
func (g *Guard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a.Unmap()}, g.Check(a)
	}
	r := g.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
	}
	for i, a := range addrs {
		if err := g.Check(a); err != nil {
			return nil, fmt.Errorf("%s resolves to %s: %w", host, a, err)
		}
		addrs[i] = a.Unmap()
	}
	return addrs, nil
}

// control is the dialer's last check, on the address being connected.
func (g *Guard) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrBlocked, address, err)
	}
	return g.Check(ap.Addr())
}
