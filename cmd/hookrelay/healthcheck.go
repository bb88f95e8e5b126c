package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"time"
)

// healthcheck is the container healthcheck (the image has no curl): for
// target `api`, the API's /readyz on HOOKRELAY_HTTP_ADDR must answer 200; for
// `worker`, its /metrics on HOOKRELAY_METRICS_ADDR must.
func (a *app) healthcheck(ctx context.Context, target string) error {
	addr, path := a.cfg.HTTPAddr, "/readyz"
	if target == "worker" {
		addr, path = a.cfg.Metrics.Addr, "/metrics"
		if addr == "" {
			return fmt.Errorf("healthcheck worker: HOOKRELAY_METRICS_ADDR is not set, so the worker serves nothing to check")
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	scheme, hc := a.healthClient(target)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+local(addr)+path, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck %s: %w", target, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck %s: %s answered %s", target, path, resp.Status)
	}
	fmt.Fprintln(a.stdout, "ok")
	return nil
}

// healthClient is the scheme and client that check target: HTTPS for an
// API that serves it. The check dials its own process on loopback, by an
// address the certificate need not name, and sends no credentials: it asks
// whether the API answers, not who it is, so it verifies no certificate.
func (a *app) healthClient(target string) (string, *http.Client) {
	if target != "api" || !a.cfg.TLS.On() {
		return "http", http.DefaultClient
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // see above
	return "https", &http.Client{Transport: tr}
}

// local is addr with an unspecified host (":8080", "0.0.0.0:8080") made
// loopback, where a process reaches its own listener.
func local(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}
