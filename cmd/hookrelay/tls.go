package main

import (
	"crypto/tls"
	"fmt"
	"net"

	"github.com/hookrelay/hookrelay/config"
)

// loadTLS loads the API's certificate (HOOKRELAY_TLS_CERT,
// HOOKRELAY_TLS_KEY) before anything starts, so that a bad file stops
// start-up naming it; without them the API serves plain HTTP.
func (a *app) loadTLS() error {
	if !a.cfg.TLS.On() {
		return nil
	}
	cert, err := tls.LoadX509KeyPair(a.cfg.TLS.CertFile, a.cfg.TLS.KeyFile)
	if err != nil {
		return fmt.Errorf("api: TLS certificate %s=%s with %s=%s: %w",
			config.EnvTLSCert, a.cfg.TLS.CertFile, config.EnvTLSKey, a.cfg.TLS.KeyFile, err)
	}
	a.tls = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	return nil
}

// listen listens where the API serves: HTTPS when loadTLS loaded a
// certificate.
func (a *app) listen() (net.Listener, error) {
	ln, err := net.Listen("tcp", a.cfg.HTTPAddr)
	if err != nil {
		return nil, fmt.Errorf("api: listen on %s: %w", a.cfg.HTTPAddr, err)
	}
	if a.tls != nil {
		return tls.NewListener(ln, a.tls), nil
	}
	return ln, nil
}

// scheme is how the API is reached on its own address.
func (a *app) scheme() string {
	if a.cfg.TLS.On() {
		return "https"
	}
	return "http"
}
