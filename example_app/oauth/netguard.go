package oauth

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
)

// errNotPublic refuses a client metadata document on an address that is
// not on the public internet.
var errNotPublic = errors.New("oauth: a client metadata document must be on a public address")

// notPublic lists the special-purpose ranges (IANA's IPv4 and IPv6
// special-purpose address registries, RFC 6890 and its updates) that a
// client metadata document URL must not reach: this machine, its
// networks, the carrier-grade NAT and benchmarking ranges, documentation,
// multicast and reserved space, and the IPv6 prefixes that embed an IPv4
// address or lead to one (NAT64, 6to4, Teredo), any of which can reach
// an internal IPv4 host.
var notPublic = func() []netip.Prefix {
	var out []netip.Prefix
	for _, p := range []string{
		"0.0.0.0/8",       // "this network"
		"10.0.0.0/8",      // private
		"100.64.0.0/10",   // carrier-grade NAT (shared address space)
		"127.0.0.0/8",     // loopback
		"169.254.0.0/16",  // link-local (cloud metadata services)
		"172.16.0.0/12",   // private
		"192.0.0.0/24",    // IETF protocol assignments
		"192.0.2.0/24",    // documentation
		"192.31.196.0/24", // AS112
		"192.52.193.0/24", // AMT
		"192.88.99.0/24",  // 6to4 relay anycast
		"192.168.0.0/16",  // private
		"192.175.48.0/24", // AS112 direct delegation
		"198.18.0.0/15",   // benchmarking
		"198.51.100.0/24", // documentation
		"203.0.113.0/24",  // documentation
		"224.0.0.0/4",     // multicast
		"240.0.0.0/4",     // reserved, and the broadcast address
		"::/128",          // unspecified
		"::1/128",         // loopback
		"::/96",           // IPv4-compatible (deprecated)
		"::ffff:0:0/96",   // IPv4-mapped (unmapped before the check; listed for safety)
		"64:ff9b::/96",    // NAT64
		"64:ff9b:1::/48",  // local-use NAT64
		"100::/64",        // discard-only
		"2001::/23",       // IETF protocol assignments (Teredo 2001::/32 among them)
		"2001:db8::/32",   // documentation
		"2002::/16",       // 6to4
		"3fff::/20",       // documentation
		"5f00::/16",       // segment routing SIDs
		"fc00::/7",        // unique local
		"fe80::/10",       // link-local
		"fec0::/10",       // site-local (deprecated)
		"ff00::/8",        // multicast
	} {
		out = append(out, netip.MustParsePrefix(p))
	}
	return out
}()

// publicAddr reports whether ip is on the public internet: in none of the
// notPublic ranges.
func publicAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	for _, p := range notPublic {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// publicOnly is the metadata fetcher's dial check: a client_id URL is
// chosen by whoever registers, so it must not reach this server's own
// network or any other non-public address, unless InsecureMetadataURLs
// allows loopback for tests. It runs on the address actually dialled,
// after name resolution, so a name that resolves to an internal address
// is refused too.
func (s *Server) publicOnly(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return errNotPublic
	}
	ip = ip.Unmap().WithZone("")
	if ip.IsLoopback() && s.opts.InsecureMetadataURLs {
		return nil
	}
	if !publicAddr(ip) {
		return fmt.Errorf("%w: %s", errNotPublic, ip)
	}
	return nil
}
